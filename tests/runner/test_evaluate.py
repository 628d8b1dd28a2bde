"""The evaluation pipeline in-process with timing on a host-clock stand-in: what a device run reports
(times, speedup, roofline numbers, verified timed calls), checked on the CPU."""
from pathlib import Path

import pytest

from .host_clock import HostClockBackend
from ladder.runner.evaluate import evaluate
from ladder.runner.options import Options

ADD = Path(__file__).parent / "fixtures" / "add"


@pytest.fixture(scope="module")
def interpreter(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TRITON_INTERPRET", "1")
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))  # no measured ceilings
        yield


@pytest.fixture(scope="module")
def timed_result(interpreter):
    options = Options(seeds=2, seed=7, reps=12, cases=[0, 2])
    solutions = {"candidate": ADD / "solution.py", "baseline": ADD / "solution.py",
                 "stale": ADD / "stale_after_checks.py", "partial": ADD / "partial_after_checks.py"}
    return evaluate(str(ADD / "problem.py"), {k: str(v) for k, v in solutions.items()},
                    HostClockBackend(), options)


def test_correct_candidate_gets_times_speedup_and_roofline(timed_result):
    for case in timed_result["solutions"]["candidate"]["cases"]:
        assert case["correct"] and case["time_ms"]["reps"] == 12
        assert case["time_ms"]["p10"] <= case["time_ms"]["median"] <= case["time_ms"]["p90"]
        assert case["speedup"] > 0 and case["gbps"] > 0 and case["roofline_pct"] > 0
        assert case["verified_timed_calls"] >= 2


def test_reference_is_timed_in_the_same_loop(timed_result):
    for case in timed_result["cases"]:
        assert case["reference_ms"]["reps"] == 12
        assert case["bytes"] == 3 * 4 * case["params"]["N"] and case["bytes_source"] == "problem"


def test_baseline_and_candidate_are_both_timed(timed_result):
    assert all(case["time_ms"] for case in timed_result["solutions"]["baseline"]["cases"])


def test_candidate_correct_only_while_checked_is_caught_in_the_timed_calls(timed_result):
    report = timed_result["solutions"]["stale"]
    assert not report["ok"] and report["rejected"]["stage"] == "runtime"
    assert "returned a wrong result" in report["rejected"]["reason"]


def test_candidate_that_writes_half_its_output_once_checked_is_caught_in_the_timed_calls(timed_result):
    """Timed calls do not poison fresh allocations; the poisoned outputs of the call before and the
    verified calls still catch elements left unwritten."""
    report = timed_result["solutions"]["partial"]
    assert not report["ok"] and report["rejected"]["stage"] == "runtime"
    assert "timed call" in report["rejected"]["reason"]


def test_no_fresh_allocation_is_filled_inside_a_timed_call(interpreter, monkeypatch):
    """The fill is device work between the call's events: on the H200 it made every solution that
    allocates its output read 31% slower on softmax than do_bench and the old runner measured."""
    import sys

    from ladder.runner import guards
    from ladder.runner.contestant import Contestant

    inside, outside = [], []
    fill = guards.poison

    def watched(tensor):
        frame = sys._getframe(1)
        while frame is not None and frame.f_code is not Contestant.go.__code__:
            frame = frame.f_back
        (inside if frame is not None else outside).append(tensor.numel())
        fill(tensor)

    monkeypatch.setattr(guards, "poison", watched)
    options = Options(seeds=1, seed=3, reps=4, cases=[0], contestants="in-process")
    result = evaluate(str(ADD / "problem.py"), {"candidate": str(ADD / "solution.py")}, HostClockBackend(), options)
    assert result["solutions"]["candidate"]["ok"]
    assert inside == [] and outside  # the checked call's allocation was filled, no timed call's


@pytest.mark.parametrize("contestants", ["in-process", "process"])
def test_code_under_diagnosis_that_finishes_in_torch_is_timed_with_what_the_guards_saw(interpreter, contestants):
    """Rung 2's mode: the honesty guards note instead of rejecting, so an unfused torch epilogue is
    still checked and timed; the same file as a verdict is rejected."""
    epilogue = {"candidate": str(ADD / "torch_epilogue.py")}
    noted = Options(seeds=1, seed=3, reps=4, cases=[0], contestants=contestants, static_checks=False,
                    guards="report")
    report = evaluate(str(ADD / "problem.py"), epilogue, HostClockBackend(), noted)["solutions"]["candidate"]
    assert report["rejected"] is None and report["ok"]
    case = report["cases"][0]
    assert case["time_ms"]["reps"] == 4
    assert case["notes"] == ["forward calls torch compute ops: Tensor.add, torch.clamp, torch.relu",
                             "returns output 0, which no Triton kernel wrote (its memory was never passed to one)"]
    judged = Options(seeds=1, seed=3, reps=4, cases=[0], contestants=contestants, static_checks=False)
    verdict = evaluate(str(ADD / "problem.py"), epilogue, HostClockBackend(), judged)["solutions"]["candidate"]
    assert verdict["rejected"]["reason"].startswith("forward calls torch compute ops: Tensor.add x1")


def test_guards_mode_is_one_of_two():
    with pytest.raises(ValueError, match="guards must be"):
        Options(guards="off")


def test_an_in_process_evaluation_leaves_the_callers_garbage_collector_as_it_was(interpreter):
    """A frozen heap is never collected again: in the caller's process (rung 2 in-process, ``ladder
    suite``) that kept every cycle alive and left later JIT compiles finding stale kernels."""
    import gc

    frozen = gc.get_freeze_count()
    options = Options(seeds=1, seed=3, reps=4, cases=[0], contestants="in-process")
    evaluate(str(ADD / "problem.py"), {"candidate": str(ADD / "solution.py")}, HostClockBackend(), options)
    assert gc.get_freeze_count() == frozen and gc.isenabled()


def test_ceilings_and_seeds_are_recorded(timed_result):
    assert timed_result["ceilings"]["source"] == "defaults" and timed_result["base_seed"] == 7
    assert timed_result["timed"] and timed_result["device_error"] is None


def test_the_verdict_says_where_the_judgement_spent_its_time(timed_result):
    everything = timed_result["stage_seconds"]
    seconds = {stage: value for stage, value in everything.items() if ":" not in stage}
    assert list(seconds) == ["static", "load", "contestants", "case prepare", "case check", "case time", "cases"]
    assert all(value >= 0 for value in everything.values())
    per_case = seconds["case prepare"] + seconds["case check"] + seconds["case time"]
    assert per_case <= seconds["cases"] + 0.05 and sum(seconds.values()) - per_case <= timed_result["elapsed_s"] + 0.05
    parts = {stage: {p.split(": ")[1]: v for p, v in everything.items() if p.startswith(f"{stage}: ")}
             for stage in ("case check", "case time")}
    assert set(parts["case check"]) == {"first calls", "calls", "reading outputs", "reference", "compare"}  # 2 seeds
    assert set(parts["case time"]) == {"warmup", "arm", "flush", "go", "verify"}
    for stage, split in parts.items():  # the parts are inside their stage's time
        assert sum(split.values()) <= seconds[stage] + 0.05


def test_in_process_timing_does_not_count_the_judges_own_work_as_the_solutions(interpreter):
    """In-process (trusted code: a kernel under diagnosis), the solution's recorders are on from arm
    to go; the judge's L2 flush in between must not read as the solution's torch compute."""
    options = Options(seeds=1, seed=3, reps=4, cases=[0], contestants="in-process")
    result = evaluate(str(ADD / "problem.py"), {"candidate": str(ADD / "solution.py")}, HostClockBackend(), options)
    report = result["solutions"]["candidate"]
    assert report["rejected"] is None and report["ok"]
    assert report["cases"][0]["time_ms"]["reps"] == 4


def test_the_judge_holds_no_more_device_memory_than_the_timing_needs(interpreter, monkeypatch):
    """On an 80 GB card a 4 GiB output left the contestants no room: the judge kept the last checked
    output through the timing, and each verification's float64 temporaries stayed in its cache.
    The timing now starts without the checked output, and each verification gives its cache back."""
    import sys

    from ladder.runner import case as case_module

    released_from, at_timing = [], []

    class CountingBackend(HostClockBackend):
        def release_cached_memory(self):
            released_from.append(sys._getframe(1).f_code.co_name)

    time_case = case_module.time_case

    def watched(case):
        at_timing.append(case.last_native)
        time_case(case)

    monkeypatch.setitem(case_module.CASE_STAGES, "time", watched)  # the table evaluate runs
    options = Options(seeds=2, seed=5, reps=6, cases=[0], contestants="in-process")
    result = evaluate(str(ADD / "problem.py"), {"candidate": str(ADD / "solution.py")}, CountingBackend(), options)
    verified = result["solutions"]["candidate"]["cases"][0]["verified_timed_calls"]
    assert result["solutions"]["candidate"]["ok"] and verified >= 1
    assert at_timing == [None]
    assert released_from.count("verify") == verified
