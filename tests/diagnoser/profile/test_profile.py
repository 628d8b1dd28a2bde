"""Rung 2's assembly: a runner bench record plus ncu counters -> per-case roofline position and class."""
from __future__ import annotations

from pathlib import Path

import pytest

from ladder.diagnoser.profile import ncu
from ladder.diagnoser.profile.nvidia import assemble, attach_occupancy
from ladder.diagnoser.rungs import measured_metrics

ROWS = ncu.parse_raw_csv((Path(__file__).parents[1] / "data" / "ncu_raw_2025.csv").read_text())
H200 = {"bandwidth": 4.2e12, "flops": {"fp32": 6.7e13, "tf32": 4.9e14, "fp16": 7.9e14, "bf16": 7.9e14}, "source": "test"}
RECORD = {"rejected": None, "ok": True, "device": "NVIDIA H200", "cases": [
    {"case": 0, "params": {"N": 16777216}, "correct": True, "kernels": ["add_kernel"], "launches": 1,
     "time_ms": {"median": 0.0285, "iqr": 0.0004}, "reference_ms": 0.030, "speedup": 1.05,
     "flops": 16777216.0, "bytes": 100696064.0, "allow_tf32": False, "compute_dtype": "float32"},
    {"case": 1, "params": {"M": 4096, "N": 4096, "K": 4096}, "correct": True, "kernels": ["matmul_kernel"], "launches": 1,
     "time_ms": {"median": 1.9, "iqr": 0.01}, "reference_ms": 0.21, "speedup": 0.11,
     "flops": 2 * 4096.0 ** 3, "bytes": 3 * 4096 * 4096 * 2.0, "allow_tf32": False, "compute_dtype": "float16"},
    {"case": 2, "params": {"M": 8192}, "correct": False, "reason": "max abs error 3.1 at [0, 5]", "kernels": [], "launches": None},
]}


def counters(available=True):
    cases = {(0, 0): [ncu.counters(ROWS[0])], (0, 1): [ncu.counters(ROWS[1])]} if available else {}
    return {"available": available, "why": "2 launches profiled" if available else "ncu not found", "cases": cases,
            "errors": {}}


@pytest.fixture
def profile():
    return assemble(RECORD, H200, counters())


def test_each_timed_case_gets_time_throughput_floor_and_class(profile):
    add, mm, wrong = profile["cases"]
    assert add["class"] == "memory-bound" and add["util_source"] == "ncu"
    assert add["achieved_gbps"] == pytest.approx(100696064 / 28.5e-6 / 1e9)
    assert add["efficiency"] == pytest.approx((100696064 / 4.2e12) / 28.5e-6)
    assert mm["class"] == "latency-bound"
    assert mm["ceiling_flops"] == 7.9e14  # the fp16 peak, from the case's compute dtype
    assert wrong["why"].startswith("not timed: max abs error")


def test_occupancy_theoretical_comes_from_rung_three_and_achieved_from_ncu(profile):
    mm = profile["cases"][1]
    assert mm["occupancy"]["achieved"] == pytest.approx(0.119)
    assert mm["occupancy"]["theoretical"] is None
    attach_occupancy(profile, [{"kernel": "matmul_kernel[K:i32%16]", "kind": "occupancy",
                                "value": {"occupancy": 0.125, "warps_per_sm": 8, "limiter": "shared"}}])
    assert mm["occupancy"]["theoretical"] == 0.125


def test_counters_for_the_report_include_stalls_and_bank_conflicts(profile):
    mm = profile["cases"][1]["ncu"]
    assert mm["top_stalls"][0]["reason"] == "wait"
    assert mm["smem_ld_conflict_pct"] == pytest.approx(25.0)


def test_without_ncu_the_class_rests_on_events_and_the_report_says_why():
    profile = assemble(RECORD, H200, counters(available=False))
    assert profile["ncu"] == {"available": False, "why": "ncu not found"}
    add = profile["cases"][0]
    assert add["util_source"] == "events" and "ncu" not in add
    assert add["occupancy"]["achieved"] is None


def test_a_rejected_solution_with_no_timed_case_is_an_error_not_a_profile():
    rejected = {**RECORD, "rejected": {"stage": "runtime", "reason": "forward calls torch compute ops"},
                "cases": [RECORD["cases"][2]]}
    with pytest.raises(RuntimeError, match="forward calls torch compute ops"):
        assemble(rejected, H200, counters())


def test_triage_receives_per_kernel_counters_in_its_metric_names(profile):
    metrics = measured_metrics(profile)
    assert set(metrics) == {"add_kernel", "matmul_kernel"}
    mm = metrics["matmul_kernel"]
    assert mm["roofline_class"] == "latency"
    assert mm["occupancy"]["achieved_pct"] == pytest.approx(11.9)
    assert mm["stalls"]["barrier"] == pytest.approx(3.12)
    assert mm["launches_per_forward"] == 1


def autotuned_gemm(launches, counts):
    case = {"case": 0, "params": {"M": 512, "N": 512, "K": 512}, "correct": True, "kernels": ["matmul_kernel"],
            "launches": launches, "launch_counts": counts, "time_ms": {"median": 0.04, "iqr": 0.001},
            "reference_ms": 0.03, "speedup": 0.75, "flops": 2 * 512.0 ** 3, "bytes": 3 * 512 * 512 * 2.0,
            "allow_tf32": False, "compute_dtype": "float16"}
    return assemble({**RECORD, "cases": [case]}, H200, counters(available=False))["cases"][0]


def test_an_autotuned_gemm_is_classed_on_its_steady_state_launches():
    steady = {"first_call": 1, "autotuning_excluded": 1080, "per_forward": 1, "source": "timed calls", "warmup_calls": 5}
    case = autotuned_gemm(1, steady)
    assert case["class"] != "launch-bound"
    assert case["steady_state"] == {"launches_per_forward": 1, "counted_on": "timed calls", "warmup_calls": 5,
                                    "excluded_launches": {"autotuning": 1080, "first_call_only": 0}}
    # what counting the autotuner's benchmarking as the forward's made of the same kernel
    assert autotuned_gemm(1081, {})["class"] == "launch-bound"


def test_a_launch_bound_class_says_on_which_calls_its_launches_were_counted():
    counts = {"first_call": 12, "autotuning_excluded": 40, "per_forward": 8, "source": "timed calls", "warmup_calls": 6}
    case = autotuned_gemm(8, counts)
    assert case["class"] == "launch-bound"
    assert case["why"].endswith("; 8 launches per forward counted on the timed calls after 6 warm-up calls"
                                " (40 autotuning, 4 first-call-only launches left out)")


def test_what_the_guards_saw_in_a_forward_under_diagnosis_stays_on_its_case():
    """Rung 2 benches in the runner's report mode: a torch epilogue is timed, and named on the case."""
    from ladder.diagnoser.profile.nvidia import BENCH_OPTIONS

    assert BENCH_OPTIONS["guards"] == "report" and BENCH_OPTIONS["static_checks"] is False
    noted = {**RECORD["cases"][0], "notes": ["forward calls torch compute ops: torch.relu"]}
    case = assemble({**RECORD, "cases": [noted]}, H200, counters(available=False))["cases"][0]
    assert case["guard_notes"] == ["forward calls torch compute ops: torch.relu"] and case["time_s"] > 0
