"""The escalation policy, run on recorded rung outputs (no compiler, device or index involved)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from diagnoser import ladder
from diagnoser.ladder import Rung, RungUnavailable, Subject

RECORDED = Path(__file__).parent / "data" / "recorded"


def recorded_rungs(name: str, calls: list[str] | None = None, replace: dict | None = None) -> dict[str, Rung]:
    """The ladder's rungs, each returning what it returned when this kernel was diagnosed."""
    outputs = json.loads((RECORDED / f"{name}.json").read_text())
    calls = calls if calls is not None else []

    def replay(rung_name):
        def run(subject, state):
            calls.append(rung_name)
            return json.loads(json.dumps(outputs[rung_name]))
        return run

    rungs = {}
    for rung_name, rung in ladder.RUNGS.items():
        run = (replace or {}).get(rung_name, replay(rung_name))
        rungs[rung_name] = Rung(rung.number, rung.title, run, rung.needs_device, rung.outputs)
    return rungs


def on_gpu() -> Subject:
    return Subject("solution.py", "problem.py", backend="cuda", device="NVIDIA H200")


def on_cpu() -> Subject:
    return Subject("solution.py", "problem.py", backend="aot", device=None)


def record(state: dict, number: int) -> dict:
    return next(r for r in state["rungs"] if r["rung"] == number)


def test_climbs_to_the_top_while_the_gap_stays_unexplained():
    calls: list[str] = []
    state = ladder.climb(on_gpu(), rungs=recorded_rungs("softmax_rows", calls))
    assert calls == ["triage", "profile", "ir", "source"]
    assert state["reached"] == 4
    assert "unexplained" in record(state, 3)["why"]


def test_stops_after_profiling_when_rung_one_explains_the_measured_gap():
    calls: list[str] = []
    state = ladder.climb(on_gpu(), rungs=recorded_rungs("vecadd_scalar", calls))
    assert calls == ["triage", "profile"]
    assert state["reached"] == 2
    assert state["gap"]["explained"]
    for number in (3, 4):
        assert not record(state, number)["ran"]
        assert record(state, number)["why"].startswith("stopped:")
        assert "nv.scalar-access" in record(state, number)["why"]


def test_stops_when_every_case_is_at_the_roofline():
    state = ladder.climb(on_gpu(), rungs=recorded_rungs("matmul_at_roofline"))
    assert state["reached"] == 2
    assert "nothing to explain" in record(state, 3)["why"]


def test_rung_three_findings_can_close_the_gap_for_rung_four():
    softmax = json.loads((RECORDED / "softmax_rows.json").read_text())
    softmax["ir"]["findings"][0]["confidence"] = 0.9
    rungs = recorded_rungs("softmax_rows")
    calls: list[str] = []

    def ir(subject, state):
        calls.append("ir")
        return softmax["ir"]
    rungs["ir"] = Rung(3, "IR attribution", ir, outputs=("facts",))
    state = ladder.climb(on_gpu(), rungs=rungs)
    assert state["reached"] == 3
    assert "nv.register-spill" in record(state, 4)["why"]


def test_without_a_device_runs_rungs_one_three_four_and_says_why_not_two():
    calls: list[str] = []
    state = ladder.climb(on_cpu(), rungs=recorded_rungs("vecadd_scalar", calls))
    assert calls == ["triage", "ir", "source"]
    assert not record(state, 2)["ran"]
    assert "no device" in record(state, 2)["why"]
    assert "gap is unknown" in record(state, 3)["why"]


def test_rungs_outside_the_requested_span_are_not_climbed():
    calls: list[str] = []
    state = ladder.climb(on_gpu(), selected={1, 2}, rungs=recorded_rungs("softmax_rows", calls))
    assert calls == ["triage", "profile"]
    assert record(state, 3)["why"] == "not requested (--rungs 1-2)"


def test_exhaustive_climbs_past_an_explained_gap():
    calls: list[str] = []
    state = ladder.climb(on_gpu(), exhaustive=True, rungs=recorded_rungs("vecadd_scalar", calls))
    assert calls == ["triage", "profile", "ir", "source"]
    assert record(state, 3)["why"].startswith("--exhaustive")


def test_a_failing_rung_records_its_error_and_the_climb_goes_on():
    def broken(subject, state):
        raise ValueError("bad IR\nsecond line")
    state = ladder.climb(on_gpu(), rungs=recorded_rungs("softmax_rows", replace={"ir": broken}))
    assert record(state, 3)["status"] == "failed"
    assert record(state, 3)["error"] == "ValueError: bad IR"
    assert record(state, 4)["ran"]


def test_an_unavailable_rung_says_why_and_is_not_counted_as_run():
    def no_index(subject, state):
        raise RungUnavailable("no index at .ladder/index (run `ladder index build`)")
    state = ladder.climb(on_gpu(), rungs=recorded_rungs("softmax_rows", replace={"source": no_index}))
    assert not record(state, 4)["ran"]
    assert "ladder index build" in record(state, 4)["why"]
    assert state["reached"] == 3


def test_resuming_a_recorded_climb_reruns_nothing_and_finishes_it():
    def no_index(subject, state):
        raise RungUnavailable("indexer not installed")
    first = ladder.climb(on_gpu(), rungs=recorded_rungs("softmax_rows", replace={"source": no_index}))
    calls: list[str] = []
    resumed = ladder.climb(on_cpu(), state=json.loads(json.dumps(first)),
                           rungs=recorded_rungs("softmax_rows", calls))
    assert calls == ["source"]
    assert record(resumed, 2)["ran"]  # measured on the GPU, kept
    assert resumed["reached"] == 4


def test_findings_are_not_duplicated_when_a_later_rung_reports_them_again():
    softmax = json.loads((RECORDED / "softmax_rows.json").read_text())

    def ir(subject, state):
        return {"facts": [], "findings": softmax["triage"]["findings"] + softmax["ir"]["findings"]}
    state = ladder.climb(on_gpu(), rungs=recorded_rungs("softmax_rows", replace={"ir": ir}))
    patterns = [f["pattern"] for f in state["findings"]]
    assert sorted(patterns) == ["nv.hardcoded-config", "nv.register-spill"]


@pytest.mark.parametrize("selected,expected", [({1, 2, 3, 4}, "1-4"), ({3}, "3"), ({1, 3}, "1,3")])
def test_the_requested_span_is_echoed_as_typed(selected, expected):
    assert ladder._span(selected) == expected
