"""The adversarial set (bench/sets/adversarial) through the judge on the CPU host-clock backend: every
cheat gets the verdict and the reason its label says, with the static rules on and, where a runtime
guard must catch it alone, off; every unusual honest solution passes both ways. Then process hygiene:
Ctrl-C during a hang, a setsid grandchild, a memory bomb, and the seed of a timed-out run.

The set runs in batches of about ten files per evaluation, as bench/runner/adversarial.py runs it,
whose batching and grading these tests share; a batch runs when a test first asks for one of its files."""
from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import yaml

from ladder.runner import sandbox, seeds
from ladder.runner.bench import bench_pair

from ..bench_scripts import load_bench_script

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures"
BACKEND = "tests.runner.host_clock:backend"
# One case (N=1000) is enough to show each trick; the others cost time, not coverage.
OPTIONS = {"cases": [0]}


def _script():
    return load_bench_script("runner/adversarial.py")


ADVERSARIAL = _script()
LABELS, PROBLEMS = ADVERSARIAL.load_labels()
ON_CPU = {"can_time": True, "on_device": False}
STATIC = [label.file for label in ADVERSARIAL.selected(LABELS, static=True, **ON_CPU)]
RUNTIME = [label.file for label in ADVERSARIAL.selected(LABELS, static=False, **ON_CPU)]


class Verdicts:
    """Every file's ``Outcome`` with the static rules on and off, by (file, static), each batch run
    when a test first asks for one of its files: the whole set takes longer than one test may."""

    def __init__(self):
        self.found: dict[tuple[str, bool], object] = {}
        self.batches = {static: ADVERSARIAL.batches([LABELS[name] for name in names], LABELS)
                        for static, names in ((True, STATIC), (False, RUNTIME))}

    def __getitem__(self, key: tuple[str, bool]) -> object:
        name, static = key
        if key not in self.found:
            batch = next(batch for batch in self.batches[static] if any(label.file == name for label in batch))
            outcomes = ADVERSARIAL.run_batch(batch, PROBLEMS, backend=BACKEND, static=static, **OPTIONS)
            self.found.update({(file, static): outcome for file, outcome in outcomes.items()})
        return self.found[key]


@pytest.fixture(scope="module")
def verdicts() -> Verdicts:
    return Verdicts()


def check(outcome) -> None:
    assert (outcome.got, outcome.want_reason in (outcome.reason or "")) == (outcome.expected, True), (
        f"{outcome.file}: expected {outcome.expected} with {outcome.want_reason!r}, got {outcome.got}: {outcome.reason}")
    if outcome.static and outcome.want_rule:
        assert outcome.want_rule in outcome.rules, f"{outcome.file}: no {outcome.want_rule} error in {outcome.rules}"


@pytest.mark.parametrize("name", STATIC)
def test_with_static_rules(verdicts, name):
    check(verdicts[name, True])


@pytest.mark.parametrize("name", RUNTIME)
def test_with_runtime_guards_alone(verdicts, name):
    check(verdicts[name, False])


def test_the_set_is_labelled_and_large_enough():
    folder = ADVERSARIAL.SET
    helpers = set(yaml.safe_load((folder / "labels.yaml").read_text())["helpers"])
    solutions = {path.name for path in folder.glob("*.py")} - {path.name for path in PROBLEMS.values()} - helpers
    assert solutions == set(LABELS)
    cheats = [label for label in LABELS.values() if label.expect != "accepted"]
    assert len(cheats) >= 40 and len(LABELS) - len(cheats) >= 10
    assert all(label.expect in ("rejected", "failed", "accepted") and (label.reason or label.expect == "accepted")
               for label in LABELS.values())


def test_a_memory_bomb_stops_at_its_limit_with_a_one_line_reason(verdicts):
    outcome = verdicts["hygiene_memory_bomb.py", False]
    limit = LABELS["hygiene_memory_bomb.py"].options["memory_limit_gib"]
    assert outcome.got == "rejected" and "\n" not in outcome.reason
    resident = float(outcome.reason.split("(")[1].split(" GiB")[0])
    assert f"limit of {limit:.1f} GiB" in outcome.reason and limit <= resident < limit + 1


# ------------------------------------------------------------------------------------ process hygiene


def marked_processes() -> dict[int, str]:
    """pid -> evaluation marker of every live process that carries one."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or not sandbox._alive(int(entry.name)):
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        for variable in environ:
            if variable.startswith(f"{sandbox.EVALUATION_ENV}=".encode()):
                found[int(entry.name)] = variable.split(b"=", 1)[1].decode()
    return found


def test_ctrl_c_during_a_hanging_candidate_leaves_no_process_behind():
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        from ladder.runner.bench import bench
        bench({str(FIXTURES / 'add' / 'problem.py')!r}, {{"hang": {str(FIXTURES / 'add' / 'hang.py')!r}}},
              backend="interpret", seeds=1, cases=[0], call_timeout_s=600)
    """)
    parent = subprocess.Popen([sys.executable, "-c", script], start_new_session=True)
    try:
        deadline, markers = time.time() + 120, set()
        while time.time() < deadline:
            family = sandbox.descendants(parent.pid)
            markers = {marker for pid, marker in marked_processes().items() if pid in family}
            if len(markers) == 2:  # the judge's, and the contestants' (started by the judge)
                break
            time.sleep(0.2)
        assert len(markers) == 2, "the evaluation never started its contestant"
        time.sleep(3)  # well into the hanging check
        parent.send_signal(signal.SIGINT)
        parent.wait(timeout=60)
    finally:
        if parent.poll() is None:
            parent.kill()
    time.sleep(0.5)
    assert not set(marked_processes().values()) & markers


def test_a_setsid_grandchild_is_killed_when_the_evaluation_ends(tmp_path, monkeypatch):
    escapees = tmp_path / "escapees"
    monkeypatch.setenv("LADDER_TEST_ESCAPEE", str(escapees))
    record = bench_pair(FIXTURES / "escape" / "solution.py", FIXTURES / "escape" / "problem.py",
                        backend="interpret", seeds=1)
    assert record["ok"]
    pids = [int(pid) for pid in escapees.read_text().split()]
    assert pids and not [pid for pid in pids if sandbox._alive(pid)]


def test_the_seed_of_a_timed_out_run_is_recorded_and_replays_the_timeout():
    def hangs(base: int) -> bool:  # the fixture hangs when its inputs' seed is odd
        return seeds.derive(base, "check", 0, 0) % 2 == 1

    hanging = next(base for base in range(100) if hangs(base))
    finishing = next(base for base in range(100) if not hangs(base))
    options = {"backend": "interpret", "seeds": 1, "cases": [0], "static_checks": False, "call_timeout_s": 5}
    solution, problem = FIXTURES / "add" / "hang_on_odd_seed.py", FIXTURES / "add" / "problem.py"
    first = bench_pair(solution, problem, seed=hanging, **options)
    assert first["base_seed"] == hanging
    assert first["rejected"]["stage"] == "timeout" and "no answer to 'check' within 5 s" in first["rejected"]["reason"]
    replay = bench_pair(solution, problem, seed=first["base_seed"], **options)
    assert replay["rejected"] == first["rejected"] and replay["base_seed"] == hanging
    assert bench_pair(solution, problem, seed=finishing, **options)["ok"]
