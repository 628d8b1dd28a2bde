"""The escalation policy, run on recorded rung outputs (no compiler, device or index involved)."""
from __future__ import annotations

import json

import pytest

from ladder.diagnoser import ladder
from ladder.diagnoser.ladder import Rung
from ladder.diagnoser.subject import NothingLaunched, RungUnavailable

from .ladder_recorded import recorded, replaying


def record(state: dict, number: int) -> dict:
    return next(r for r in state["rungs"] if r["rung"] == number)


def test_climbs_to_the_top_while_the_gap_stays_unexplained(gpu_subject):
    calls: list[str] = []
    state = ladder.climb(gpu_subject, rungs=replaying("softmax_rows", calls))
    assert calls == ["triage", "profile", "ir", "compiler"]
    assert state["reached"] == 4
    assert "unexplained" in record(state, 3)["why"]


def test_stops_after_profiling_when_rung_one_explains_the_measured_gap(gpu_subject):
    calls: list[str] = []
    state = ladder.climb(gpu_subject, rungs=replaying("vecadd_scalar", calls))
    assert calls == ["triage", "profile"]
    assert state["reached"] == 2
    assert state["gap"]["explained"]
    for number in (3, 4):
        assert not record(state, number)["ran"]
        assert record(state, number)["why"].startswith("stopped:")
        assert "nv.scalar-access" in record(state, number)["why"]


def test_stops_when_every_case_is_at_the_roofline(gpu_subject):
    state = ladder.climb(gpu_subject, rungs=replaying("matmul_at_roofline"))
    assert state["reached"] == 2
    assert "nothing to explain" in record(state, 3)["why"]


def test_rung_three_findings_can_close_the_gap_for_rung_four(gpu_subject):
    softmax = recorded("softmax_rows")
    softmax["ir"]["findings"][0]["confidence"] = 0.9
    rungs = replaying("softmax_rows")
    calls: list[str] = []

    def ir(subject, state):
        calls.append("ir")
        return softmax["ir"]
    rungs["ir"] = Rung(3, "IR attribution", ir, outputs=("facts",))
    state = ladder.climb(gpu_subject, rungs=rungs)
    assert state["reached"] == 3
    assert "nv.register-spill" in record(state, 4)["why"]


def test_without_a_device_runs_rungs_one_three_four_and_says_why_not_two(cpu_subject):
    calls: list[str] = []
    state = ladder.climb(cpu_subject, rungs=replaying("vecadd_scalar", calls))
    assert calls == ["triage", "ir", "compiler"]
    assert not record(state, 2)["ran"]
    assert "no device" in record(state, 2)["why"]
    assert "gap is unknown" in record(state, 3)["why"]


def test_rungs_outside_the_requested_span_are_not_climbed(gpu_subject):
    calls: list[str] = []
    state = ladder.climb(gpu_subject, selected={1, 2}, rungs=replaying("softmax_rows", calls))
    assert calls == ["triage", "profile"]
    assert record(state, 3)["why"] == "not requested (--rungs 1-2)"


def test_exhaustive_climbs_past_an_explained_gap(gpu_subject):
    calls: list[str] = []
    state = ladder.climb(gpu_subject, exhaustive=True, rungs=replaying("vecadd_scalar", calls))
    assert calls == ["triage", "profile", "ir", "compiler"]
    assert record(state, 3)["why"].startswith("--exhaustive")


def test_a_failing_rung_records_its_error_and_the_climb_goes_on(gpu_subject):
    def broken(subject, state):
        raise ValueError("bad IR\nsecond line")
    state = ladder.climb(gpu_subject, rungs=replaying("softmax_rows", replace={"ir": broken}))
    assert record(state, 3)["status"] == "failed"
    assert record(state, 3)["error"] == "ValueError: bad IR"
    assert record(state, 3)["where"].startswith("test_policy.py:") and record(state, 3)["where"].endswith(" in broken")
    assert record(state, 4)["ran"]


def test_an_unavailable_rung_says_why_and_is_not_counted_as_run(gpu_subject):
    def no_index(subject, state):
        raise RungUnavailable("no index at .ladder/index (run `ladder index build`)")
    state = ladder.climb(gpu_subject, rungs=replaying("softmax_rows", replace={"compiler": no_index}))
    assert not record(state, 4)["ran"]
    assert "ladder index build" in record(state, 4)["why"]
    assert state["reached"] == 3


def test_resuming_a_recorded_climb_reruns_nothing_and_finishes_it(gpu_subject, cpu_subject):
    def no_index(subject, state):
        raise RungUnavailable("indexer not installed")
    first = ladder.climb(gpu_subject, rungs=replaying("softmax_rows", replace={"compiler": no_index}))
    calls: list[str] = []
    resumed = ladder.climb(cpu_subject, state=json.loads(json.dumps(first)),
                           rungs=replaying("softmax_rows", calls))
    assert calls == ["compiler"]
    assert record(resumed, 2)["ran"]  # measured on the GPU, kept
    assert resumed["reached"] == 4


def test_findings_are_not_duplicated_when_a_later_rung_reports_them_again(gpu_subject):
    softmax = recorded("softmax_rows")

    def ir(subject, state):
        return {"facts": [], "findings": softmax["triage"]["findings"] + softmax["ir"]["findings"]}
    state = ladder.climb(gpu_subject, rungs=replaying("softmax_rows", replace={"ir": ir}))
    patterns = [f["pattern"] for f in state["findings"] if f["rung"] < 4]
    assert sorted(patterns) == ["nv.hardcoded-config", "nv.register-spill"]


@pytest.mark.parametrize("selected,expected", [({1, 2, 3, 4}, "1-4"), ({3}, "3"), ({1, 3}, "1,3")])
def test_the_requested_span_is_echoed_as_typed(selected, expected):
    assert ladder._span(selected) == expected


def test_a_fact_cited_flat_or_nested_counts_the_same_for_the_gap():
    from ladder.diagnoser import gap

    fact = {"kernel": "k", "kind": "spill", "value": {}, "file": None, "line": None, "stage": "sass", "excerpt": ""}
    flat = {"pattern": None, "confidence": 0.9, "evidence": [{"type": "fact", **fact}]}
    nested = {"pattern": None, "confidence": 0.9, "evidence": [{"type": "fact", "fact": fact}]}
    assert gap.causes_of(flat) == gap.causes_of(nested) == gap.FACT_CAUSES["spill"]


def _case(efficiency, cls="latency-bound", kernels=("k",), source="ncu"):
    return {"case": 0, "efficiency": efficiency, "class": cls, "kernels": list(kernels), "util_source": source}


def _finding(pattern, confidence=0.9, kernel="k"):
    return {"pattern": pattern, "confidence": confidence, "kernel": kernel, "title": pattern, "evidence": []}


def _seen_in(label, also_a_fact=False):
    fact = [{"type": "fact", "kind": "spill"}] if also_a_fact else []
    evidence = [{"type": "source", "line": 12, "cases": [label]}] + fact
    return {**_finding("nv.scalar-access"), "evidence": evidence}


@pytest.mark.parametrize("finding,case,explained", [
    (_finding("nv.scalar-access"), _case(0.3, "memory-bound"), True),
    (_finding("nv.scalar-access"), _case(0.3, "compute-bound"), False),     # wrong kind of cause
    (_finding("nv.scalar-access", confidence=0.65), _case(0.3), False),     # not confident enough
    (_finding("nv.scalar-access", kernel="other"), _case(0.3), False),      # another kernel's finding
    (_finding("nv.hardcoded-config"), _case(0.3), False),                   # a missed opportunity, not a cause
    (_finding("nv.launch-bound"), _case(0.2, "launch-bound"), True),
    (None, _case(0.85), True),                                              # at the roofline already
    # events see only compulsory bytes: their latency-bound may be extra traffic, counters' may not
    (_finding("nv.redundant-global-traffic"), _case(0.3, source="events"), True),
    (_finding("nv.redundant-global-traffic"), _case(0.3, source="ncu"), False),
    (_finding("nv.redundant-global-traffic"), _case(0.3, "compute-bound", source="events"), False),
    # a check that named the sizes it saw the pattern in did not see it in the others
    (_seen_in("n=3000"), {**_case(0.3, "memory-bound"), "params": {"n": 3000}}, True),
    (_seen_in("n=3000"), {**_case(0.3, "memory-bound"), "params": {"n": 4096}}, False),
    (_seen_in("n=3000", also_a_fact=True), {**_case(0.3, "memory-bound"), "params": {"n": 4096}}, True),
    (_seen_in("n=3000"), _case(0.3, "memory-bound"), True),                  # a script's site: no sizes
])
def test_what_explains_a_case(finding, case, explained):
    from ladder.diagnoser import gap

    verdict = gap.assess({"cases": [case]}, [finding] if finding else [])
    assert verdict["explained"] is explained


def _site_case(case, time_us, floor_us, cls):
    return {"case": case, "site": {"line": 10 + case}, "time_s": time_us * 1e-6, "floor_s": floor_us * 1e-6,
            "efficiency": floor_us / time_us, "class": cls, "kernels": [f"k{case}"], "util_source": "ncu"}


def test_a_scripts_worst_case_is_the_site_that_loses_the_most_time():
    """FlagGems' argmax on the H100: the 49 us main pass at 45% of its floor, not the 4.5 us second
    pass at 0.1% of its floor, is where the forward's time goes."""
    from ladder.diagnoser import gap

    main, second = _site_case(0, 49.0, 22.0, "latency-bound"), _site_case(1, 4.5, 0.0067, "launch-bound")
    assert gap.worst_case([second, main])["case"] == 0
    verdict = gap.assess({"cases": [main, second]}, [])
    assert "worst: case 0 at 45% of its floor" in verdict["why"]


def test_a_problems_worst_case_is_its_size_furthest_below_its_floor():
    from ladder.diagnoser import gap

    sizes = [{**_site_case(0, 49.0, 22.0, "memory-bound"), "site": None},
             {**_site_case(1, 4.5, 0.45, "launch-bound"), "site": None}]
    assert gap.worst_case(sizes)["case"] == 1
    assert gap.worst_case([{"case": 0, "efficiency": None}]) is None


# Module-level rungs: under time limits every rung runs in a child process, which imports them.
def quick_triage(subject, state):
    return {"findings": [], "summary": "0 findings"}


def hung_ir(subject, state):
    import time

    time.sleep(600)


def failing_ir(subject, state):
    return {}["facts"]


def autotune_setting_seen(subject, state):
    import os

    return {"facts": [{"kind": "env", "value": os.environ.get("TRITON_CACHE_AUTOTUNING")}]}


def nothing_launched(subject, state):
    raise NothingLaunched("plain.py launched no Triton kernel (aot capture): nothing to diagnose")


def limited_rungs(ir) -> dict[str, Rung]:
    return {"triage": Rung(1, "pattern triage", quick_triage, outputs=("findings",)),
            "ir": Rung(3, "IR attribution", ir, outputs=("facts",))}


def test_a_rung_past_its_time_limit_is_stopped_and_recorded_as_timed_out(cpu_subject):
    state = ladder.climb(cpu_subject, rungs=limited_rungs(hung_ir), limits={"triage": 60, "ir": 1.5})
    ir = record(state, 3)
    assert ir["status"] == "failed" and ir["timed_out"] and 1.5 <= ir["seconds"] < 30
    assert ir["error"].startswith("timed out: stopped after 1.5 s")
    assert record(state, 1)["status"] == "ok"


def test_a_rung_failing_in_its_own_process_says_where_it_raised(cpu_subject):
    state = ladder.climb(cpu_subject, rungs=limited_rungs(failing_ir), limits={"triage": 60, "ir": 60})
    ir = record(state, 3)
    assert ir["status"] == "failed" and ir["error"] == "KeyError: 'facts'"
    assert ir["where"].startswith("test_policy.py:") and ir["where"].endswith(" in failing_ir")


def test_a_climbs_runs_share_one_autotuning_even_in_a_rungs_own_process(cpu_subject, monkeypatch):
    import dataclasses
    import os

    monkeypatch.delenv("TRITON_CACHE_AUTOTUNING", raising=False)
    script = dataclasses.replace(cpu_subject, problem=None, script=True)
    for subject in (script, cpu_subject):
        state = ladder.climb(subject, rungs=limited_rungs(autotune_setting_seen), limits={"triage": 60, "ir": 60})
        assert state["facts"] == [{"kind": "env", "value": "1"}]
        assert "TRITON_CACHE_AUTOTUNING" not in os.environ  # the climb's setting ends with it
    monkeypatch.setenv("TRITON_CACHE_AUTOTUNING", "0")  # the user's own choice stands
    state = ladder.climb(script, rungs=limited_rungs(autotune_setting_seen), limits={"triage": 60, "ir": 60})
    assert state["facts"] == [{"kind": "env", "value": "0"}]


def test_a_subject_that_launches_nothing_ends_the_climb_with_an_error(cpu_subject):
    state = ladder.climb(cpu_subject, rungs=replaying("softmax_rows", replace={"ir": nothing_launched}))
    assert state["error"].startswith("plain.py launched no Triton kernel")
    assert record(state, 3)["status"] == "failed" and record(state, 3)["nothing_launched"]
    assert not record(state, 4)["ran"] and record(state, 4)["why"].startswith("not climbed: plain.py")


def test_ctrl_c_during_a_rung_carries_the_rungs_done_so_far(gpu_subject):
    def interrupted(subject, state):
        raise KeyboardInterrupt
    with pytest.raises(ladder.ClimbInterrupted) as raised:
        ladder.climb(gpu_subject, rungs=replaying("softmax_rows", replace={"ir": interrupted}))
    state = raised.value.state
    assert [record(state, n)["status"] for n in (1, 2, 3, 4)] == ["ok", "ok", "failed", "skipped"]
    assert record(state, 3)["interrupted"]
    assert record(state, 4)["why"] == "not climbed: interrupted during rung 3 (IR attribution)"
    assert state["error"] == state["stopped"] == "interrupted during rung 3 (IR attribution)"
    assert state["reached"] == 3


def test_a_rung_cut_off_by_ctrl_c_runs_again_when_the_climb_resumes(gpu_subject):
    def interrupted(subject, state):
        raise KeyboardInterrupt
    with pytest.raises(ladder.ClimbInterrupted) as raised:
        ladder.climb(gpu_subject, rungs=replaying("softmax_rows", replace={"ir": interrupted}))
    calls: list[str] = []
    resumed = ladder.climb(gpu_subject, state=json.loads(json.dumps(raised.value.state)),
                           rungs=replaying("softmax_rows", calls))
    assert calls == ["ir", "compiler"]
    assert "error" not in resumed and resumed["reached"] == 4
