"""The optimization loop's control flow, with the device timer replaced by a deterministic one.

Candidates carry their own timing in a comment (``# speed: 1.5`` or one factor per case); the fake
gate turns that into a judge's evaluation and the real gate decides on it.
"""
from __future__ import annotations

import json
import re
import time
from dataclasses import replace
from pathlib import Path

import pytest

from ladder.diagnoser.optimize import loop
from ladder.diagnoser.optimize.gate import GateSettings, decide
from ladder.diagnoser.optimize.journal import Journal
from ladder.diagnoser.optimize.loop import OptimizeError, Settings, optimize
from ladder.diagnoser.optimize.proposers import Proposal
from ladder.diagnoser.optimize.report import build as build_report

CASES = 3
INITIAL = "class ModelNew:\n    pass\n# speed: 1.0\n"


def speeds(source: str) -> list[float]:
    found = re.search(r"# speed: ([\d.,]+)", source)
    values = [float(v) for v in found.group(1).split(",")] if found else [1.0]
    return values * CASES if len(values) == 1 else values


def fake_report(source: str) -> dict:
    if "# out of memory" in source:
        return {"ok": False, "rejected": {"stage": "device-memory", "reason": "forward raised OutOfMemoryError"},
                "cases": [{"case": i, "label": f"c{i}", "correct": False, "reason": "rejected"} for i in range(CASES)]}
    if "# reject" in source:
        return {"ok": False, "rejected": {"stage": "runtime", "reason": "forward calls torch compute ops: Tensor.add x1"},
                "cases": [{"case": i, "label": f"c{i}", "correct": False, "reason": "rejected"} for i in range(CASES)]}
    wrong = "# wrong" in source
    cases = []
    for i, speed in enumerate(speeds(source)):
        time_ms = (i + 1) / speed
        case = {"case": i, "label": f"c{i}", "correct": not wrong, "flags": [], "roofline_pct": min(100.0, 40.0 * speed),
                "speedup": 2.0 * speed, "time_ms": {"median": time_ms}}
        if wrong:
            case["reason"] = "seed 1: output: max error 0.5 exceeds tolerance 1e-4"
        cases.append(case)
    return {"ok": not wrong, "rejected": None, "cases": cases}


def fake_result(best, initial, candidates) -> tuple[dict, str]:
    """The judge's evaluation of one gate run, and the name of the initial version's entry in it."""
    files = {"best": best, "best-again": best}
    if Path(initial).read_text() != Path(best).read_text():
        files["initial"] = initial
    files.update(candidates)
    result = {"timed": True, "device": "fake GPU", "device_uuid": "GPU-0", "backend": "fake",
              "cases": [{"case": i, "reference_ms": {"median": 2.0 * (i + 1)}} for i in range(CASES)],
              "solutions": {name: fake_report(Path(path).read_text()) for name, path in files.items()}}
    return result, "initial" if "initial" in files else "best"


def fake_gate(problem, best, initial, candidates, settings, torch_compile=False):
    result, initial_name = fake_result(best, initial, candidates)
    return decide(result, list(candidates), initial_name)


def gate_whose_best_dies(calls_that_fail: set[int]):
    """The fake gate, but in the given runs (1 is the baseline's) the best's contestant dies."""
    calls = []

    def gate(problem, best, initial, candidates, settings, torch_compile=False):
        calls.append(1)
        result, initial_name = fake_result(best, initial, candidates)
        if len(calls) in calls_that_fail:
            result["solutions"]["best"] = {"ok": False, "cases": [], "rejected": {
                "stage": "contestant", "reason": "the contestant process died (signal 9)"}}
        return decide(result, list(candidates), initial_name)
    return gate


class Scripted:
    """Proposes the scripted sources round after round (a round with an empty list: nothing new)."""

    name = "scripted"

    def __init__(self, rounds: list[list[str]]):
        self.rounds = rounds
        self.calls = 0

    def propose(self, brief, count):
        self.calls += 1
        batch = self.rounds[brief.round - 1] if brief.round <= len(self.rounds) else []
        return [Proposal(source=INITIAL.replace("# speed: 1.0", marker), summary=f"try {marker}") for marker in batch]


@pytest.fixture
def pair(tmp_path):
    solution, problem = tmp_path / "solution.py", tmp_path / "problem.py"
    solution.write_text(INITIAL)
    problem.write_text("# the problem\n")
    return solution, problem


def run(pair, tmp_path, script, resume=False, **settings):
    solution, problem = pair
    defaults = {"rounds": 15, "patience": 3, "evidence": "timing", "gate": GateSettings()}
    return optimize(solution, problem, tmp_path / "run", Scripted(script), Settings(**{**defaults, **settings}),
                    resume=resume, gate=fake_gate)


def rounds_of(tmp_path):
    return Journal(tmp_path / "run").rounds()


def test_accepts_the_fastest_gated_improvement_and_never_a_wrong_or_slower_one(pair, tmp_path):
    result = run(pair, tmp_path, [["# speed: 1.5", "# speed: 0.99", "# speed: 3.0 # wrong", "# speed: 4.0 # reject"]])
    first = rounds_of(tmp_path)[0]
    assert first["accepted"] == "r1-c1"
    outcomes = {p["id"]: p["outcome"] for p in first["proposals"]}
    assert "not faster than the best" in outcomes["r1-c2"]["reason"]
    assert "max error" in outcomes["r1-c3"]["reason"] and not outcomes["r1-c3"]["accepted"]
    assert "rejected (runtime)" in outcomes["r1-c4"]["reason"]
    assert result["geomean_vs_initial"] == pytest.approx(1.5)
    assert "speed: 1.5" in (tmp_path / "run" / "best.py").read_text()


def test_keeps_the_best_when_a_later_round_gains_nothing(pair, tmp_path):
    run(pair, tmp_path, [["# speed: 1.5"], ["# speed: 1.2"], ["# speed: 1.505"]])
    rounds = rounds_of(tmp_path)
    assert [r["accepted"] for r in rounds[:3]] == ["r1-c1", None, None]
    assert rounds[-1]["best"]["round"] == 1 and "speed: 1.5\n" in (tmp_path / "run" / "best.py").read_text()


def test_a_candidate_slower_than_the_initial_version_on_one_case_is_not_accepted(pair, tmp_path):
    run(pair, tmp_path, [["# speed: 3.0,3.0,0.8"]])
    outcome = rounds_of(tmp_path)[0]["proposals"][0]["outcome"]
    assert not outcome["accepted"] and "slower than the initial version on case c2" in outcome["reason"]


def test_stops_early_at_the_roofline(pair, tmp_path):
    result = run(pair, tmp_path, [["# speed: 2.5"], ["# speed: 3.0"]])
    assert "roofline floor" in result["stopped"] and result["rounds"] == 1


def test_stops_after_patience_rounds_without_gain(pair, tmp_path):
    result = run(pair, tmp_path, [["# speed: 0.9"]] * 10, patience=3)
    assert result["rounds"] == 3 and "3 rounds without a gain" in result["stopped"]


def test_stops_when_the_proposer_has_nothing_new(pair, tmp_path):
    result = run(pair, tmp_path, [["# speed: 1.5"], []])
    assert result["rounds"] == 2 and "nothing new" in result["stopped"]


def test_refuses_to_overwrite_a_run_without_resume(pair, tmp_path):
    run(pair, tmp_path, [["# speed: 1.5"], []])
    with pytest.raises(OptimizeError, match="--resume"):
        run(pair, tmp_path, [["# speed: 1.5"], []])


def test_refuses_to_resume_a_run_whose_problem_changed_since(pair, tmp_path):
    run(pair, tmp_path, [["# speed: 1.5"]], rounds=1)
    pair[1].write_text("# the problem, with other cases\n")
    with pytest.raises(OptimizeError, match="changed since"):
        run(pair, tmp_path, [["# speed: 2.0"]], resume=True, rounds=2)
    assert len(rounds_of(tmp_path)) == 1


class Killed(BaseException):
    """A kill -9 at some point of a round: nothing after it runs, nothing is cleaned up."""


@pytest.mark.parametrize("stage", list(loop.ROUND_STAGES))
def test_a_kill_at_any_stage_resumes_with_the_same_best_and_no_round_twice(pair, tmp_path, monkeypatch, stage):
    script = [["# speed: 1.5"], ["# speed: 2.0"], ["# speed: 1.9"], []]
    reference = tmp_path / "reference"
    reference.mkdir()
    (reference / "solution.py").write_text(INITIAL)
    run((reference / "solution.py", pair[1]), reference, script)
    expected = [(r["round"], r["accepted"]) for r in rounds_of(reference)]

    original = loop.ROUND_STAGES[stage]
    calls = {"n": 0}

    def dies_in_round_two(state):
        if state.number == 2 and calls["n"] == 0:
            calls["n"] += 1
            original(state)
            raise Killed()
        original(state)

    monkeypatch.setitem(loop.ROUND_STAGES, stage, dies_in_round_two)
    with pytest.raises(Killed):
        run(pair, tmp_path, script)
    monkeypatch.setitem(loop.ROUND_STAGES, stage, original)
    run(pair, tmp_path, script, resume=True)
    got = [(r["round"], r["accepted"]) for r in rounds_of(tmp_path)]
    assert got == expected
    assert "speed: 2.0" in (tmp_path / "run" / "best.py").read_text()


def test_a_journal_line_cut_short_is_not_a_round(pair, tmp_path):
    run(pair, tmp_path, [["# speed: 1.5"], ["# speed: 2.0"]], rounds=1)
    journal = tmp_path / "run" / "journal.jsonl"
    with open(journal, "ab") as handle:
        handle.write(b'{"kind": "round", "round": 2, "best"')  # the tail of an append a kill cut
    result = run(pair, tmp_path, [["# speed: 1.5"], ["# speed: 2.0"], []], resume=True, rounds=3)
    numbers = [r["round"] for r in rounds_of(tmp_path)]
    assert numbers == sorted(set(numbers)) == [1, 2, 3] and result["geomean_vs_initial"] == pytest.approx(2.0)


def test_each_round_records_what_learn_and_the_report_need(pair, tmp_path):
    run(pair, tmp_path, [["# speed: 1.5"], []])
    first = rounds_of(tmp_path)[0]
    for key in ("round", "proposer", "proposals", "accepted", "proposal", "diff", "outcome", "best", "device",
                "device_uuid", "seconds", "spread"):
        assert key in first
    assert first["outcome"] == {"compiled": True, "correct": True, "speedup": pytest.approx(1.5), "accepted": True,
                                "reason": first["proposals"][0]["outcome"]["reason"]}
    assert first["diff"].startswith("--- a/solution.py") and (tmp_path / "run" / first["proposals"][0]["file"]).is_file()
    header = Journal(tmp_path / "run").header()
    assert header["device"] == "fake GPU" and json.dumps(header)
    # where each round's time went, stage by stage, and the baseline gate's own time
    assert set(first["stage_seconds"]) == {"diagnose", "brief", "propose", "gate"}
    assert all(seconds >= 0 for seconds in first["stage_seconds"].values())
    assert sum(first["stage_seconds"].values()) <= first["seconds"] and header["gate_seconds"] >= 0


HANGING_SOLUTION = '''
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def unrolled_forever(x_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.load(x_ptr + offsets, mask=offsets < n)
    for _ in tl.static_range(1_000_000_000):
        acc = acc + 1.0
    tl.store(x_ptr + offsets, acc, mask=offsets < n)


class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()

    def forward(self, x, y):
        unrolled_forever[(1,)](x, x.numel(), BLOCK=256)
        return x
'''


@pytest.mark.slow
def test_a_diagnosis_rung_that_hangs_is_stopped_and_the_round_keeps_the_rest(tmp_path, monkeypatch):
    """The loop diagnoses its best every round; a compile that never ends costs that rung only."""
    from types import SimpleNamespace

    monkeypatch.setenv("LADDER_INDEX_DIR", str(tmp_path / "no-index"))
    solution = tmp_path / "solution.py"
    solution.write_text(HANGING_SOLUTION)
    problem = Path(__file__).parents[1] / "data" / "kernels" / "scaled_add" / "problem.py"
    assert Settings().rung_timeouts == loop.RUNG_TIMEOUTS_S  # on by default, as for ladder diagnose
    settings = Settings(rungs=(1, 3), rung_timeouts={**loop.RUNG_TIMEOUTS_S, "ir": 6.0})
    state = loop.diagnose_best(solution, problem, None, SimpleNamespace(settings=settings))
    rungs = {r["rung"]: r for r in state["rungs"]}
    assert rungs[1]["status"] == "ok"
    assert rungs[3]["timed_out"] and 6 <= rungs[3]["seconds"] < 40


def test_the_round_after_a_win_diagnoses_the_new_best_with_its_own_timing(pair, tmp_path):
    """Rung 2 of the next round reads the gate's timing of the winner, not of the best it replaced."""
    seen = []

    def diagnose(best, problem, last_gate, run):
        timed = last_gate.record["solutions"][run.best_in_gate]
        seen.append((Path(best).read_text(), [c["time_ms"]["median"] for c in timed["cases"]]))
        return {"reached": 2, "findings": []}

    solution, problem = pair
    optimize(solution, problem, tmp_path / "run", Scripted([["# speed: 2.0"], []]),
             Settings(rounds=3, evidence="full", gate=GateSettings()), gate=fake_gate, diagnose=diagnose)
    (first_source, first_times), (second_source, second_times) = seen
    assert "# speed: 1.0" in first_source and first_times == [1.0, 2.0, 3.0]
    assert "# speed: 2.0" in second_source and second_times == [0.5, 1.0, 1.5]


def test_a_candidate_out_of_device_memory_is_left_unjudged_and_the_run_is_not_void(pair, tmp_path):
    """Unjudged, as in a void run: the proposers offer it again (test_rules' unjudged-candidate test)."""
    run(pair, tmp_path, [["# speed: 2.0 # out of memory"], ["# speed: 2.0"]], rounds=2)
    first, second = rounds_of(tmp_path)
    outcome = first["proposals"][0]["outcome"]
    assert not outcome["accepted"] and not outcome["judged"]
    assert outcome["reason"].startswith("not judged: out of device memory in this run")
    assert first["void"] is None and second["accepted"] == "r2-c1"


def test_a_gate_that_would_run_past_the_deadline_is_not_started_and_the_resume_gates_it(pair, tmp_path, monkeypatch):
    import time

    gates = []

    def counting_gate(*args, **kwargs):
        gates.append(kwargs.get("torch_compile", False))
        return fake_gate(*args, **kwargs)

    solution, problem = pair
    monkeypatch.setattr(loop, "expected_gate_seconds", lambda run, candidates: 1e6)
    settings = Settings(rounds=2, evidence="timing", gate=GateSettings(), deadline=time.monotonic() + 1000)
    summary = optimize(solution, problem, tmp_path / "run", Scripted([["# speed: 2.0"]]), settings, gate=counting_gate)
    assert summary["stopped"] == loop.DEADLINE and gates == [True] and rounds_of(tmp_path) == []
    monkeypatch.undo()
    optimize(solution, problem, tmp_path / "run", Scripted([["# speed: 2.0"]]),
             Settings(rounds=1, evidence="timing", gate=GateSettings()), resume=True, gate=counting_gate)
    assert [r["accepted"] for r in rounds_of(tmp_path)] == ["r1-c1"] and gates == [True, False]


def gate_killed_when_its_limit_is_short(limits: list[float]):
    """The fake gate, but a run given less than its full hour is killed as the worker would be."""
    def gate(problem, best, initial, candidates, settings, torch_compile=False):
        limits.append(settings.timeout_s)
        result, initial_name = fake_result(best, initial, candidates)
        if settings.timeout_s < GateSettings().timeout_s:
            for name, report in result["solutions"].items():
                running = name not in ("best", "best-again", "initial")
                report.update(ok=False, rejected={"stage": "timeout" if running else "not-run",
                                                  "reason": "timed out (killed)"})
        result["worker"] = {"status": "timeout" if settings.timeout_s < GateSettings().timeout_s else "ok"}
        return decide(result, list(candidates), initial_name)
    return gate


def test_a_gate_cut_by_the_deadline_blames_no_candidate_and_the_resume_gates_it_again(pair, tmp_path, monkeypatch):
    import time

    limits = []
    solution, problem = pair
    optimize(solution, problem, tmp_path / "run", Scripted([]), Settings(rounds=0, evidence="timing",
             gate=GateSettings()), gate=gate_killed_when_its_limit_is_short(limits))
    monkeypatch.setattr(loop, "expected_gate_seconds", lambda run, candidates: 0.0)  # the estimate is wrong
    settings = Settings(rounds=2, evidence="timing", gate=GateSettings(), deadline=time.monotonic() + 100)
    summary = optimize(solution, problem, tmp_path / "run", Scripted([["# speed: 2.0"]]), settings, resume=True,
                       gate=gate_killed_when_its_limit_is_short(limits))
    assert summary["stopped"] == loop.DEADLINE and rounds_of(tmp_path) == []
    assert limits[0] == GateSettings().timeout_s and 0 < limits[1] <= 100
    stop = Journal(tmp_path / "run").records()[-1]
    assert not stop["final"] and stop["cut"]["round"] == 1 and "r1-c1, timed out" in stop["cut"]["while"]
    optimize(solution, problem, tmp_path / "run", Scripted([["# speed: 2.0"]]), settings, resume=True,
             gate=gate_killed_when_its_limit_is_short(limits))
    summary = optimize(solution, problem, tmp_path / "run", Scripted([["# speed: 2.0"]]), settings, resume=True,
                       gate=gate_killed_when_its_limit_is_short(limits))
    assert len(limits) == 3  # cut twice: the third call under a deadline does not gate it again
    assert summary["stopped"].startswith("the gate of round 1 ran into the call's deadline 2 times")
    assert Journal(tmp_path / "run").records()[-1]["final"]
    optimize(solution, problem, tmp_path / "run", Scripted([["# speed: 2.0"]]),
             Settings(rounds=1, evidence="timing", gate=GateSettings()), resume=True,
             gate=gate_killed_when_its_limit_is_short(limits))
    assert [r["accepted"] for r in rounds_of(tmp_path)] == ["r1-c1"]  # a call with no deadline gates it


def test_a_baseline_cut_by_the_deadline_leaves_no_journal_so_the_next_call_starts_again(pair, tmp_path):
    import time

    solution, problem = pair
    settings = Settings(rounds=1, evidence="timing", gate=GateSettings(), deadline=time.monotonic() + 50)
    with pytest.raises(OptimizeError, match="deadline passed while timing the initial solution"):
        optimize(solution, problem, tmp_path / "run", Scripted([]), settings, gate=gate_killed_when_its_limit_is_short([]))
    assert not Journal(tmp_path / "run").exists()


def test_the_expected_gate_time_is_the_slowest_seconds_per_contestant_seen(pair, tmp_path):
    from types import SimpleNamespace

    journal = Journal(tmp_path / "run")
    journal.start({"solution": "s.py", "problem": "p.py", "gate_seconds": 20.0, "best": {}})
    journal.append({"kind": "round", "round": 1, "stage_seconds": {"gate": 120.0},
                    "proposals": [{"file": "a"}, {"file": "b"}, {"file": "c"}, {"file": None}]})
    assert loop.expected_gate_seconds(SimpleNamespace(journal=journal), 2) == pytest.approx(100.0)


def test_a_run_in_which_the_best_fails_judges_no_candidate_and_the_next_round_goes_on(pair, tmp_path):
    solution, problem = pair
    script = Scripted([["# speed: 1.5", "# wrong"], ["# speed: 1.5"]])
    summary = optimize(solution, problem, tmp_path / "run", script,
                       Settings(rounds=2, patience=3, evidence="timing", gate=GateSettings()),
                       gate=gate_whose_best_dies({2}))
    first, second = rounds_of(tmp_path)
    assert first["void"].startswith("the best so far was rejected in this run (contestant)")
    assert first["accepted"] is None and first["best"]["round"] == 0
    fast, wrong = (entry["outcome"] for entry in first["proposals"])
    assert not fast["judged"] and fast["reason"].startswith("not judged: the best so far was rejected")
    assert wrong["judged"] and "exceeds tolerance" in wrong["reason"]  # its own failure stands
    assert second["void"] is None and second["accepted"] == "r2-c1" and summary["best_round"] == 2


def test_two_runs_in_a_row_in_which_the_best_fails_stop_the_loop(pair, tmp_path):
    solution, problem = pair
    summary = optimize(solution, problem, tmp_path / "run", Scripted([["# speed: 1.5"]] * 5),
                       Settings(rounds=5, patience=5, evidence="timing", gate=GateSettings()),
                       gate=gate_whose_best_dies({2, 3}))
    assert len(rounds_of(tmp_path)) == 2
    assert summary["stopped"].startswith("the best so far failed in two judge runs in a row")


def gate_that_queued(seconds: float):
    """The fake gate as a cluster's would answer after its evaluation queued ``seconds`` for a GPU."""
    def gate(problem, best, initial, candidates, settings, torch_compile=False):
        time.sleep(seconds)
        return replace(fake_gate(problem, best, initial, candidates, settings, torch_compile), waited_s=seconds)
    return gate


QUEUED_SCRIPT = [["# speed: 1.2"], ["# speed: 1.4"], ["# speed: 1.6"], []]


def test_time_a_gate_spent_queued_for_a_gpu_does_not_spend_the_budget(pair, tmp_path):
    """Each gate queues 0.4 s behind other operators': with a budget of 1 s the run still does all
    its rounds, as it would alone; the same gate without the queueing reported stops on the budget."""
    solution, problem = pair
    settings = Settings(rounds=15, patience=3, evidence="timing", gate=GateSettings(), budget_s=1.0)
    optimize(solution, problem, tmp_path / "queued", Scripted(QUEUED_SCRIPT), settings, gate=gate_that_queued(0.4))
    queued = Journal(tmp_path / "queued").rounds()
    assert [r["accepted"] for r in queued] == ["r1-c1", "r2-c1", "r3-c1", None]
    assert [r["waited_s"] for r in queued] == [0.4, 0.4, 0.4, 0.0]
    assert Journal(tmp_path / "queued").header()["gate_waited_s"] == 0.4
    assert build_report(Journal(tmp_path / "queued"))["seconds"] < 0.3  # the device seconds the report gives

    def held(problem, best, initial, candidates, settings, torch_compile=False):
        time.sleep(0.4)
        return fake_gate(problem, best, initial, candidates, settings, torch_compile)

    optimize(solution, problem, tmp_path / "held", Scripted(QUEUED_SCRIPT), settings, gate=held)
    assert len(Journal(tmp_path / "held").rounds()) < 3
    assert "time budget" in Journal(tmp_path / "held").records()[-1]["reason"]


def test_a_resumed_run_counts_the_seconds_before_it_without_their_queueing(pair, tmp_path):
    """Two rounds of 0.4 s, all of it queueing, then a resume: the budget of 0.7 s is not spent."""
    solution, problem = pair
    settings = Settings(rounds=2, patience=3, evidence="timing", gate=GateSettings(), budget_s=0.7)
    optimize(solution, problem, tmp_path / "run", Scripted(QUEUED_SCRIPT), settings, gate=gate_that_queued(0.4))
    optimize(solution, problem, tmp_path / "run", Scripted(QUEUED_SCRIPT), replace(settings, rounds=15), resume=True,
             gate=gate_that_queued(0.4))
    assert [r["accepted"] for r in Journal(tmp_path / "run").rounds()] == ["r1-c1", "r2-c1", "r3-c1", None]


def test_a_resume_counts_the_baseline_as_the_live_run_did_so_a_spent_budget_stays_spent(pair, tmp_path):
    """The baseline's gate takes 0.5 s and round 1's 0.3 s: a budget of 0.7 s stops the run after
    round 1. Resumed, the run must find the budget spent, not 0.3 s of it (its rounds alone)."""
    solution, problem = pair

    def slow_gate(problem, best, initial, candidates, settings, torch_compile=False):
        time.sleep(0.5 if torch_compile else 0.3)
        return fake_gate(problem, best, initial, candidates, settings, torch_compile)

    settings = Settings(rounds=15, patience=3, evidence="timing", gate=GateSettings(), budget_s=0.7)
    optimize(solution, problem, tmp_path / "run", Scripted(QUEUED_SCRIPT), settings, gate=slow_gate)
    assert len(rounds_of(tmp_path)) == 1 and "time budget" in Journal(tmp_path / "run").records()[-1]["reason"]
    optimize(solution, problem, tmp_path / "run", Scripted(QUEUED_SCRIPT), settings, resume=True, gate=slow_gate)
    assert len(rounds_of(tmp_path)) == 1
    assert loop.spent_before(Journal(tmp_path / "run")) >= 0.8


def test_the_first_round_after_a_resume_profiles_the_best_on_this_gpu(tmp_path, monkeypatch):
    """No gate of this call has timed the best yet: rung 2 runs on the device, not skipped as on a
    machine without one; a CPU task (capture "aot") and a gate on another backend still compile only."""
    from types import SimpleNamespace

    from ladder.diagnoser import ladder
    from ladder.runner import backends

    climbed = []
    monkeypatch.setattr(backends, "detect", lambda requested: ("cuda", "NVIDIA H200") if requested == "cuda" else None)
    monkeypatch.setattr(ladder, "climb", lambda subject, state, wanted, **kw: climbed.append(
        (subject.backend, subject.device, kw.get("rungs"))) or {})
    run_like = SimpleNamespace(settings=Settings(rounds=1, evidence="full", gate=GateSettings()))
    loop.diagnose_best(tmp_path / "best.py", tmp_path / "problem.py", None, run_like)
    loop.diagnose_best(tmp_path / "best.py", tmp_path / "problem.py", None, run_like, capture="aot")
    run_like.settings = Settings(rounds=1, evidence="full", gate=GateSettings(backend="interpret"))
    loop.diagnose_best(tmp_path / "best.py", tmp_path / "problem.py", None, run_like)
    assert climbed == [("cuda", "NVIDIA H200", ladder.RUNGS), ("aot", None, ladder.RUNGS), ("aot", None, ladder.RUNGS)]
