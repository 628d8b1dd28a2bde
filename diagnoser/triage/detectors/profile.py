"""Profile-level detectors: rung-2 metrics (Nsight Compute counters, event timing) when given.

`metrics` is a dict of metric name -> value for the solution, or kernel name -> such a dict.
Nested groups (`{"occupancy": {"achieved_pct": 31}}`, the shape rung 2's counters come in) are
flattened to dotted names (`occupancy.achieved_pct`). `PROFILE_METRICS` lists every name read
here and the Nsight Compute metric it comes from; absent metrics simply leave their rules silent.
"""
from __future__ import annotations

import math
from typing import Any, Optional

from ladder.diagnoser.evidence import Finding
from ladder.runner import hardware

from ..context import TriageContext
from .common import Findings, metric_evidence

PROFILE_METRICS: dict[str, str] = {
    "time_ns": "gpu__time_duration.sum (or CUDA events): kernel time",
    "launches_per_forward": "kernel launches per forward (launch hooks or the ncu row count)",
    "roofline_class": "rung 2's class: memory | compute | latency | launch",
    "sol.dram_pct": "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "sol.sm_pct": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "occupancy.theoretical_pct": "sm__maximum_warps_per_active_cycle_pct",
    "occupancy.achieved_pct": "sm__warps_active.avg.pct_of_peak_sustained_active",
    "occupancy.limit_shared_mem": "launch__occupancy_limit_shared_mem",
    "occupancy.limit_registers": "launch__occupancy_limit_registers",
    "occupancy.limit_warps": "launch__occupancy_limit_warps",
    "launch.waves_per_sm": "launch__waves_per_multiprocessor",
    "launch.grid_size": "launch__grid_size",
    "stalls.barrier": "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio",
    "stalls.lg_throttle": "smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio",
}


def flatten(metrics: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in metrics.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(flatten(value, name + "."))
        else:
            flat[name] = value
    return flat


def per_kernel(ctx: TriageContext) -> dict[Optional[str], dict[str, Any]]:
    """{kernel or None: flat metrics}: keyed by kernel when the top-level keys are kernel names."""
    metrics = ctx.metrics or {}
    names = set(ctx.kernel_names())
    if metrics and all(isinstance(v, dict) for v in metrics.values()) and set(metrics) & names:
        return {kernel: flatten(values) for kernel, values in metrics.items()}
    return {None: flatten(metrics)}


def _num(metrics: dict[str, Any], name: str) -> Optional[float]:
    value = metrics.get(name)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def detect_profile(ctx: TriageContext) -> list[Finding]:
    """Rules over the measured counters (each rule needs only the metrics it names)."""
    found = Findings(rung=2)
    for kernel, metrics in per_kernel(ctx).items():
        if not metrics:
            continue
        line = None
        small_grid = _small_grid(metrics)
        if small_grid is not None:
            found.add(ctx, "nv.small-grid", kernel, line, *small_grid)
        limit_smem = _num(metrics, "occupancy.limit_shared_mem")
        limits = [v for v in (_num(metrics, "occupancy.limit_registers"), _num(metrics, "occupancy.limit_warps"))
                  if v is not None]
        achieved = _num(metrics, "occupancy.achieved_pct")
        if limit_smem is not None and limits and limit_smem < min(limits) and (achieved is None or achieved < 25):
            found.add(ctx, "nv.smem-limits-occupancy", kernel, line, "shared memory limits or prevents residency", 0.75,
                      [metric_evidence("occupancy.limit_shared_mem", limit_smem, "programs/SM"),
                       *([metric_evidence("occupancy.achieved_pct", achieved, "%")] if achieved is not None else [])])
        time_ns = _num(metrics, "time_ns")
        launches = _num(metrics, "launches_per_forward")
        if metrics.get("roofline_class") == "launch" or (time_ns is not None and time_ns < 5000 and (launches or 1) >= 2):
            evidence = [metric_evidence("time_ns", time_ns, "ns")] if time_ns is not None else []
            if launches is not None:
                evidence.append(metric_evidence("launches_per_forward", launches))
            if metrics.get("roofline_class") is not None:
                evidence.append(metric_evidence("roofline_class", metrics["roofline_class"]))
            found.add(ctx, "nv.launch-bound", kernel, line, "launch overhead dominates", 0.75, evidence)
        barrier = _num(metrics, "stalls.barrier")
        if barrier is not None and barrier >= 1.0:
            found.add(ctx, "nv.loop-carried-reduction", kernel, line, "warps wait at barriers", 0.45,
                      [metric_evidence("stalls.barrier", barrier, "warps/issue")])
    return found.list()


def _small_grid(metrics: dict[str, Any]) -> Optional[tuple]:
    """(title, confidence, evidence) when the grid leaves SMs idle, else None.

    Under one wave is not by itself a small grid: 2048 programs on 132 SMs are one partial wave
    (ncu's waves count fills every SM to its residency limit) yet give each SM 15 programs. Idle SMs
    come from fewer programs than SMs, or from a last wave so light that a quarter or more of the
    SM-time of the launch is spent waiting for it.
    """
    grid = _num(metrics, "launch.grid_size")
    waves = _num(metrics, "launch.waves_per_sm")
    sm_count = hardware.for_target("cuda")["sm_count"]
    if grid is not None and grid < sm_count:
        return ("too few programs to fill the GPU", 0.8,
                [metric_evidence("launch.grid_size", grid, "programs"), metric_evidence("sm_count", sm_count)])
    if waves is not None and waves > 1 and waves < 4:
        idle = 1 - waves / math.ceil(waves)
        if idle >= 0.25:
            return (f"a light last wave leaves {idle:.0%} of the SM-time idle", 0.6,
                    [metric_evidence("launch.waves_per_sm", waves)])
    return None
