"""Rung 2's split of a forward of several kernels: each kernel timed by replay, on the CPU's interpreter."""
from __future__ import annotations

from pathlib import Path

import pytest

from ladder.diagnoser.profile import split
from ladder.runner import roofline

TWO = Path(__file__).parents[1] / "data" / "kernels" / "two_kernels"
ONE = Path(__file__).parents[1] / "data" / "kernels" / "scaled_add"
CEILINGS = {**roofline.default_ceilings("cuda"), "source": "defaults"}


def site(kernel, line, launches, median_ms, nbytes):
    return {"key": f"{kernel}@solution.py:{line}", "kernel": kernel, "file": "solution.py", "line": line,
            "kernel_file": "solution.py", "kernel_line": 1, "launches": launches, "other_launches": 0,
            "variants": [{"key": "v", "launches": launches, "arguments": [], "grid": [1, 1, 1], "bytes": nbytes,
                          "flops": None, "flops_from": None, "dtype": "float32",
                          "time_ms": {"median": median_ms, "iqr": 0.0, "clock": "events"}}]}


def case(index, time_s, launches, efficiency):
    return {"case": index, "time_s": time_s, "launches": launches, "efficiency": efficiency, "params": {"N": index}}


def test_the_worst_case_of_several_launches_is_split_and_single_kernel_cases_never():
    cases = [case(0, 1e-3, 1, 0.1), case(1, 1e-3, 2, 0.6), case(2, 2e-3, 3, 0.4), {"case": 3, "launches": 2}]
    assert split.worst_multi_kernel_case(cases)["case"] == 2  # case 0 is further, but it is one kernel
    assert split.worst_multi_kernel_case([case(0, 1e-3, 1, 0.1)]) is None


def test_each_kernel_gets_its_time_share_and_own_floor_and_the_rest_is_outside_the_kernels():
    # a GEMM-sized copy near its floor beside a slow epilogue: 0.6 ms + 0.3 ms of a 1.0 ms forward
    sites = [site("epilogue", 40, 1, 0.3, 4_800_000), site("main", 30, 1, 0.6, 2_400_000_000)]
    out = split.split_of(case(1, 1.0e-3, 2, 0.5), sites, CEILINGS, "events")
    assert [k["kernel"] for k in out["kernels"]] == ["main", "epilogue"]  # heaviest first
    assert out["kernels"][0]["share"] == pytest.approx(0.6) and out["kernels"][1]["share"] == pytest.approx(0.3)
    assert out["outside_s"] == pytest.approx(0.1e-3) and out["outside_share"] == pytest.approx(0.1)
    main, epilogue = out["kernels"]
    assert main["efficiency"] > epilogue["efficiency"]  # the gap is in the epilogue, whatever its share
    assert main["line"] == 30 and epilogue["class"] == "latency-bound"
    assert "sum" not in out["note"]


def test_kernels_that_take_longer_alone_than_the_forward_are_shares_of_their_sum():
    sites = [site("a", 1, 2, 0.4, 1000), site("b", 2, 1, 0.4, 1000)]  # a launched twice: 0.8 ms
    out = split.split_of(case(0, 1.0e-3, 3, 0.5), sites, CEILINGS, "events")
    assert out["kernels_s"] == pytest.approx(1.2e-3) and out["outside_s"] == 0.0
    assert sum(k["share"] for k in out["kernels"]) == pytest.approx(1.0)
    assert "shares are of their sum" in out["note"]


def test_the_driver_splits_a_real_forward_into_its_launch_sites_under_the_interpreter():
    sites = split.measure(str(TWO / "solution.py"), str(TWO / "problem.py"), 1, "cpu", 120)
    assert [(s["kernel"], s["line"], s["launches"]) for s in sites] == [("scaled_relu_kernel", 35, 1),
                                                                         ("add_kernel", 36, 1)]
    assert all(s["variants"][0]["time_ms"]["clock"] == "host" for s in sites)
    assert sites[1]["variants"][0]["bytes"] == 3 * 4 * 4096  # the case's size, not the file's default


def test_attach_split_adds_the_split_of_the_worst_case_or_says_why_it_has_none(tmp_path):
    profile = {"ceilings": CEILINGS, "cases": [case(0, 1e-3, 2, 0.9), case(1, 1e-3, 2, 0.2)]}
    split.attach_split(profile, str(TWO / "solution.py"), str(TWO / "problem.py"), device="cpu")
    assert profile["split"]["case"] == 1 and profile["split"]["label"] == "N=1"
    assert 0 < profile["split"]["seconds"] < 120  # what the split added to rung 2
    assert {k["kernel"] for k in profile["split"]["kernels"]} == {"scaled_relu_kernel", "add_kernel"}

    single = {"ceilings": CEILINGS, "cases": [case(0, 1e-3, 1, 0.2)]}
    split.attach_split(single, str(ONE / "solution.py"), str(ONE / "problem.py"), device="cpu")
    assert "split" not in single

    broken = {"ceilings": CEILINGS, "cases": [case(0, 1e-3, 2, 0.2)]}
    split.attach_split(broken, str(tmp_path / "missing.py"), str(TWO / "problem.py"), device="cpu")
    assert broken["split"]["case"] == 0 and "could not be split" in broken["split"]["error"]


def test_the_brief_shows_where_the_time_goes():
    from ladder.diagnoser.optimize.brief import brief_for

    sites = [site("epilogue", 40, 1, 0.3, 4_800_000), site("main", 30, 1, 0.6, 2_400_000_000)]
    diagnosis = {"findings": [], "facts": [], "citations": [], "gap": {"why": "far"},
                 "profile": {"split": split.split_of(case(1, 1.0e-3, 2, 0.5), sites, CEILINGS, "events")}}
    text = brief_for(2, str(TWO / "problem.py"), str(TWO / "solution.py"), "full", diagnosis, [], []).to_markdown()
    assert "## Where the time goes (case 1: N=1)" in text
    assert "| main | 30 | 1 | 0.6 | 60% |" in text and "| outside Triton kernels | - | - | 0.1 | 10% |" in text
    timing_only = brief_for(2, str(TWO / "problem.py"), str(TWO / "solution.py"), "timing", diagnosis, [], [])
    assert "Where the time goes" not in timing_only.to_markdown()


def test_an_unexplained_gap_names_the_kernel_that_loses_the_most_time_to_its_own_floor():
    from ladder.diagnoser import gap

    # the GEMM carries most of the time but sits near its floor; the epilogue loses more
    sites = [site("epilogue", 40, 1, 0.3, 4_800_000), site("main", 30, 1, 0.6, 2_400_000_000)]
    worst = {**case(1, 1.0e-3, 2, 0.5), "class": "latency-bound"}
    profile = {"cases": [worst], "split": split.split_of(worst, sites, CEILINGS, "events")}
    why = gap.assess(profile, [])["why"]
    assert why.endswith("most of it is lost in epilogue (line 40), 30% of the forward at 0% of its own floor")
    profile["split"]["case"] = 0  # a split of another case says nothing about this one
    assert "lost in" not in gap.assess(profile, [])["why"]


def test_the_loop_splits_the_best_it_diagnoses_from_the_gates_timing(monkeypatch):
    from ladder.diagnoser.optimize import loop
    from ladder.diagnoser.optimize.gate import GateResult

    asked = []

    def measured_sites(solution, problem, case_index, device, timeout_s):
        asked.append((solution, problem, case_index, device))
        return [site("epilogue", 36, 1, 0.3, 4_800_000), site("main", 35, 1, 0.6, 2_400_000_000)]

    monkeypatch.setattr(split, "measure", measured_sites)
    cases = [{"case": i, "label": f"c{i}", "correct": True, "time_ms": {"median": 1.0}, "kernels": ["main", "epilogue"],
              "launches": launches} for i, launches in enumerate((1, 2))]
    record = {"problem": "problem.py", "backend": "cuda", "device": "NVIDIA H200", "timed": True,
              "ceilings": {**CEILINGS, "source": "measured"},
              "cases": [{"case": i, "bytes": 1e9, "flops": 0.0, "reference_ms": {"median": 2.0}} for i in (0, 1)],
              "solutions": {"best": {"path": "best.py", "ok": True, "rejected": None, "static": [], "cases": cases}}}
    gate = GateResult(verdicts={}, spread=0.01, best_cases=[], device="NVIDIA H200", device_uuid=None, timed=True,
                      record=record)
    profile = loop._profile_from_gate(gate, "best", TWO / "solution.py", TWO / "problem.py")
    assert asked == [(str(TWO / "solution.py"), str(TWO / "problem.py"), 1, "cuda")]  # the two-kernel case
    assert [k["kernel"] for k in profile["split"]["kernels"]] == ["main", "epilogue"]
    assert profile["split"]["forward_s"] == pytest.approx(1e-3)
