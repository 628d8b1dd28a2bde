"""The loop across a local Ray cluster of logical GPUs, with the deterministic fake gate."""
from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from ladder.diagnoser.optimize.gate import GateSettings
from ladder.diagnoser.optimize.journal import Journal
from ladder.diagnoser.optimize.loop import Settings
from ladder.diagnoser.optimize.suite import optimize_suite

from .test_loop import INITIAL, Scripted, fake_gate

ray = pytest.importorskip("ray")
SCRIPT = {"op_a": [["# speed: 1.5"], ["# speed: 2.0"], []], "op_b": [["# speed: 0.5"], ["# speed: 1.2"], []],
          "op_c": [["# speed: 3.0"], []], "op_d": [["# speed: 1.1"], ["# speed: 1.3"], []]}


@dataclass(frozen=True)
class FakeOperator:
    key: str
    folder: Path

    @property
    def solution(self) -> Path:
        return self.folder / "solution.py"

    @property
    def problem(self) -> Path:
        return self.folder / "problem.py"


def operators(root: Path) -> list[FakeOperator]:
    found = []
    for key in SCRIPT:
        folder = root / "kernels" / key
        folder.mkdir(parents=True)
        (folder / "solution.py").write_text(INITIAL)
        (folder / "problem.py").write_text(f"# {key}\n")
        found.append(FakeOperator(key, folder))
    return found


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=4, num_gpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": str(Path(__file__).resolve().parents[3])}})
    yield
    ray.shutdown()


@pytest.fixture
def scripted(monkeypatch):
    from ladder.diagnoser.optimize import scale, suite

    def proposer(name, run=None, **_):
        return Scripted(SCRIPT[Path(run).name])
    monkeypatch.setattr(scale, "load_proposer", proposer)
    monkeypatch.setattr(suite, "load_proposer", proposer)


def settings() -> Settings:
    return Settings(rounds=5, patience=3, evidence="timing", gate=GateSettings())


def accepted(root: Path) -> dict[str, list]:
    return {key: [(r["round"], r["accepted"]) for r in Journal(root / key).rounds()] for key in SCRIPT}


@pytest.mark.slow
def test_the_cluster_gives_the_one_process_results_leases_gpus_one_evaluation_at_a_time_and_survives_a_lost_worker(
        cluster, scripted, tmp_path):
    from ladder.diagnoser.optimize.scale import optimize_suite_ray

    ops = operators(tmp_path)
    (ops[0].problem.with_name("kill-once")).write_text("")
    leases: list = []
    document = optimize_suite_ray(ops, settings(), "rules", tmp_path / "ray", address="local",
                                  gate="tests.diagnoser.optimize.ray_gate:gate", echo=lambda line: None, leases=leases,
                                  prebuild_target=None)  # the scripted candidates are not kernels
    assert not any("error" in row for row in document["operators"]), document["operators"]
    assert not ops[0].problem.with_name("kill-once").exists()  # the first evaluation died, and was retried

    by_gpu: dict[int, list] = {}
    for lease in leases:
        assert len(lease["gpu"]) == 1
        by_gpu.setdefault(lease["gpu"][0], []).append((lease["started"], lease["ended"]))
    assert len(by_gpu) == 2  # both GPUs were used
    for spans in by_gpu.values():
        spans.sort()
        assert all(earlier[1] <= later[0] for earlier, later in zip(spans, spans[1:]))  # never two at once

    for key in SCRIPT:  # exactly one line per round
        numbers = [r["round"] for r in Journal(tmp_path / "ray" / key).rounds()]
        assert numbers == list(range(1, len(numbers) + 1))

    for op in ops:
        shutil.copytree(op.folder, tmp_path / "one" / "kernels" / op.key)
    single = [FakeOperator(op.key, tmp_path / "one" / "kernels" / op.key) for op in ops]
    optimize_suite_one = optimize_suite(single, settings(), "rules", tmp_path / "one-process", gate=fake_gate)
    assert accepted(tmp_path / "ray") == accepted(tmp_path / "one-process")
    assert [r["speedup_vs_initial"] for r in document["operators"]] == \
        [r["speedup_vs_initial"] for r in optimize_suite_one["operators"]]


ADD = Path(__file__).resolve().parents[2] / "runner" / "fixtures" / "add"


@pytest.mark.slow
def test_contestants_compile_on_cpu_tasks_before_the_gpu_is_leased_and_the_gpu_task_finds_their_kernels(
        cluster, tmp_path):
    """Each contestant's kernels compile in the sandbox on a CPU task; the GPU task starts only with
    their caches in hand and unpacks them where its judge looks. A contestant that fails to
    compile is still evaluated (the judge compiles, or rejects, it itself)."""
    from ladder.diagnoser.optimize.scale import Board, RemoteGate
    best, broken = tmp_path / "best.py", tmp_path / "broken.py"
    shutil.copy(ADD / "solution.py", best)
    broken.write_text("raise ImportError('not a kernel')\n")
    leases: list = []
    gate = RemoteGate("add", Board(echo=lambda line: None), "tests.diagnoser.optimize.ray_gate:cache_gate", leases)
    result = gate(ADD / "problem.py", best, best, {"candidate": ADD / "solution.py", "broken": broken}, GateSettings())
    (lease,) = leases
    built = lease["prebuilt"]
    assert set(built) == {"best", "initial", "candidate", "broken"}
    assert built["candidate"]["kernels"] == 2 and built["best"]["kernels"] == 2
    assert "not a kernel" in built["broken"]["why_not"] and built["broken"]["kernels"] == 0
    assert lease["started"] >= max(b["finished_at"] for b in built.values())  # the GPU waited on no compile
    assert result.record["cached_files"]["candidate"] > 0 and result.record["cached_files"]["broken"] == 0


@pytest.mark.slow
def test_a_gate_that_waits_for_a_gpu_says_how_long_so_no_budget_counts_it(cluster, tmp_path):
    """Three gates at once on the cluster's two GPUs, each holding its GPU 1.5 s: the third cannot
    start before one of the first two has held its GPU that long, and reports that much more
    waiting than the first (the rest of the waits is Ray starting and scheduling workers)."""
    from concurrent.futures import ThreadPoolExecutor

    from ladder.diagnoser.optimize.scale import Board, RemoteGate

    problem, best = tmp_path / "problem.py", tmp_path / "best.py"
    problem.write_text("# hold: 1.5\n")
    best.write_text(INITIAL)

    def gate(name: str):
        remote = RemoteGate(name, Board(echo=lambda line: None), "tests.diagnoser.optimize.ray_gate:holding_gate",
                            prebuild_target=None)
        return remote(problem, best, best, {}, GateSettings())

    with ThreadPoolExecutor(3) as pool:
        waits = sorted(result.waited_s for result in pool.map(gate, ["a", "b", "c"]))
    assert waits[2] - waits[0] > 1.2


def test_a_gates_own_compiles_are_not_counted_as_waiting():
    from ladder.diagnoser.optimize.scale import queued_for_a_gpu

    lease = {"started": 110.0, "prebuilt": {"best": {"seconds": 4.0}, "candidate": {"seconds": 6.0}}}
    assert queued_for_a_gpu(100.0, lease) == 4.0  # 10 s to start, 6 of them the slowest compile
    assert queued_for_a_gpu(100.0, {"started": 103.0, "prebuilt": {"best": {"seconds": 5.0}}}) == 0.0
    assert queued_for_a_gpu(100.0, {"started": 101.5}) == 1.5


def timed_on_h200(solution: Path) -> "GateResult":
    """A gate as the judge on an H200 reports it: the best timed on every case of the add problem."""
    from ladder.diagnoser.optimize.gate import GateResult

    cases = [{"case": i, "bytes": 12.0 * n, "flops": 0.0, "reference_ms": {"median": 0.01}}
             for i, n in enumerate((1000, 4097, 256))]
    report = {"path": str(solution), "ok": True, "rejected": None, "static": [], "cases": [
        {"case": i, "label": f"N={n}", "correct": True, "time_ms": {"median": 0.05, "p10": 0.05, "p90": 0.05},
         "kernels": ["add_kernel"], "launches": 1} for i, n in enumerate((1000, 4097, 256))]}
    record = {"problem": str(ADD / "problem.py"), "backend": "cuda", "device": "NVIDIA H200", "timed": True,
              "cases": cases, "solutions": {"best": report}}
    return GateResult(verdicts={}, spread=0.01, best_cases=[], device="NVIDIA H200", device_uuid="GPU-0", timed=True,
                      record=record)


@pytest.mark.slow
def test_the_diagnosis_is_a_cpu_task_that_replays_the_gates_timing_and_compiles_instead_of_launching(
        cluster, tmp_path, monkeypatch):
    """Rung 2 from the GPU task's timing, rung 3 compiled ahead of time in a Ray worker: the driver
    diagnoses nothing itself and no GPU is touched outside a gate's lease."""
    from types import SimpleNamespace

    from ladder.diagnoser.optimize import loop
    from ladder.diagnoser.optimize.scale import Board, RemoteDiagnose

    monkeypatch.setattr(loop, "diagnose_best", lambda *args, **kwargs: pytest.fail("diagnosed in the driver"))
    monkeypatch.setenv("LADDER_INDEX_DIR", str(tmp_path / "no-index"))
    run = SimpleNamespace(settings=Settings(rungs=(1, 2, 3)), best_in_gate="best")
    state = RemoteDiagnose("add", Board(echo=lambda line: None))(ADD / "solution.py", ADD / "problem.py",
                                                                 timed_on_h200(ADD / "solution.py"), run)
    rungs = {r["rung"]: r for r in state["rungs"]}
    assert rungs[2]["status"] == "ok" and state["profile"]["device"] == "NVIDIA H200"
    assert [c["time_s"] for c in state["profile"]["cases"]] == pytest.approx([5e-5] * 3)
    assert rungs[3]["status"] == "ok" and "(aot capture)" in rungs[3]["summary"] and state["facts"]


def test_the_first_diagnosis_after_a_resume_leases_a_gpu_as_a_gate_does(monkeypatch):
    """A resumed run's first round has no gate of this call to read rung 2 from: its diagnosis goes to
    a GPU task, where rung 2 profiles the best; every other round's stays a CPU task."""
    from types import SimpleNamespace

    from ladder.diagnoser.optimize import scale

    submitted = []

    class Task:
        def __init__(self, kind):
            self.kind = kind

        def remote(self, best, problem, sources, last_gate, view, *capture):
            submitted.append((self.kind, last_gate, capture))
            return self.kind

    monkeypatch.setattr(scale, "_awaited", lambda reference, what: ({"reached": 2}, 0.0))
    remote = scale.RemoteDiagnose("add", scale.Board(echo=lambda line: None))
    remote._task, remote._gpu_task = Task("cpu"), Task("gpu")
    run = SimpleNamespace(settings=Settings(), best_in_gate="best")
    remote(ADD / "solution.py", ADD / "problem.py", None, run)
    remote(ADD / "solution.py", ADD / "problem.py", "the gate's result", run)
    assert submitted == [("gpu", None, ("device",)), ("cpu", "the gate's result", ())]
