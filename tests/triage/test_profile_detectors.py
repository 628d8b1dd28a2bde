"""Profile-level rules read rung-2 metrics when present and say nothing when they are absent."""
from __future__ import annotations

from diagnoser.triage.context import TriageContext
from diagnoser.triage.detectors.profile import PROFILE_METRICS, detect_profile, flatten
from diagnoser.triage.source import parse_module

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


def test_under_one_wave_is_a_small_grid():
    assert [f.pattern for f in run({"launch": {"waves_per_sm": 0.4}})] == ["nv.small-grid"]


def test_shared_memory_as_the_occupancy_limit_is_reported():
    metrics = {"occupancy": {"limit_shared_mem": 1, "limit_registers": 4, "limit_warps": 8, "achieved_pct": 9}}
    assert [f.pattern for f in run(metrics)] == ["nv.smem-limits-occupancy"]


def test_launch_class_from_rung_two_is_launch_bound():
    findings = run({"roofline_class": "launch", "time_ns": 2500, "launches_per_forward": 3})
    assert [f.pattern for f in findings] == ["nv.launch-bound"]
    assert {e["name"] for e in findings[0].evidence} == {"time_ns", "launches_per_forward", "roofline_class"}


def test_metrics_keyed_by_kernel_name_are_attributed_to_that_kernel():
    findings = run({"k": {"launch": {"waves_per_sm": 0.2}}})
    assert findings[0].kernel == "k" and findings[0].rung == 2


def test_every_rule_reads_only_documented_metrics():
    import inspect

    from diagnoser.triage.detectors import profile

    source = inspect.getsource(profile.detect_profile)
    import re

    read = set(re.findall(r'_num\(metrics, "([^"]+)"\)', source)) | set(re.findall(r'metrics.get\("([^"]+)"\)', source))
    assert read <= set(PROFILE_METRICS)
