"""Profile-level rules read rung-2 metrics when present and say nothing when they are absent."""
from __future__ import annotations

from ladder.diagnoser.triage.context import TriageContext
from ladder.diagnoser.triage.detectors.profile import PROFILE_METRICS, detect_profile, flatten
from ladder.diagnoser.triage.source import parse_module

SOURCE = """import triton
import triton.language as tl

@triton.jit
def k(x_ptr):
    pass

def launch(x):
    k[(1,)](x)
"""


def run(metrics):
    return detect_profile(TriageContext(source=parse_module(SOURCE), metrics=metrics))


def test_no_metrics_no_findings():
    assert run({}) == []


def test_nested_counter_groups_are_flattened():
    assert flatten({"launch": {"waves_per_sm": 0.5}, "time_ns": 3}) == {"launch.waves_per_sm": 0.5, "time_ns": 3}


def test_fewer_programs_than_sms_is_a_small_grid():
    assert [f.pattern for f in run({"launch": {"grid_size": 64, "waves_per_sm": 0.03}})] == ["nv.small-grid"]


def test_one_partial_wave_that_gives_every_sm_programs_is_not_a_small_grid():
    assert run({"launch": {"grid_size": 2048, "waves_per_sm": 0.48}}) == []


def test_a_light_last_wave_is_a_small_grid():
    findings = run({"launch": {"grid_size": 4400, "waves_per_sm": 1.04}})
    assert [f.pattern for f in findings] == ["nv.small-grid"] and "48%" in findings[0].title


def test_many_full_waves_are_not_a_small_grid():
    assert run({"launch": {"grid_size": 40000, "waves_per_sm": 9.5}}) == []


def test_255_registers_without_local_memory_are_not_a_spill():
    assert run({"launch": {"registers_per_thread": 255, "grid_size": 4096}}) == []


def test_shared_memory_as_the_occupancy_limit_is_reported():
    metrics = {"occupancy": {"limit_shared_mem": 1, "limit_registers": 4, "limit_warps": 8, "achieved_pct": 9}}
    assert [f.pattern for f in run(metrics)] == ["nv.smem-limits-occupancy"]


def test_launch_class_from_rung_two_is_launch_bound():
    findings = run({"roofline_class": "launch", "time_ns": 2500, "launches_per_forward": 3})
    assert [f.pattern for f in findings] == ["nv.launch-bound"]
    assert {e["name"] for e in findings[0].evidence} == {"time_ns", "launches_per_forward", "roofline_class"}


def test_metrics_keyed_by_kernel_name_are_attributed_to_that_kernel():
    findings = run({"k": {"launch": {"grid_size": 16, "waves_per_sm": 0.2}}})
    assert findings[0].kernel == "k" and findings[0].rung == 2


def test_every_rule_reads_only_documented_metrics():
    import inspect

    from ladder.diagnoser.triage.detectors import profile

    source = inspect.getsource(profile.detect_profile)
    import re

    read = set(re.findall(r'_num\(metrics, "([^"]+)"\)', source)) | set(re.findall(r'metrics.get\("([^"]+)"\)', source))
    assert read <= set(PROFILE_METRICS)
