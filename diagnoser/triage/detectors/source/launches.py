"""Grids and launches (source level, NVIDIA), judged from what each case's forward launches: too
few programs to fill the SMs (nv.small-grid), and launches too many or too small to hide what each
one costs the host (nv.launch-bound).
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any, Optional

from ladder.diagnoser.evidence import Finding

from ...context import LaunchAnalysis, TriageContext
from ..common import Findings, source_evidence
from .measures import HBM_BYTES_PER_SECOND, IDLE_SECONDS, PEAK_FLOPS, device, idle_dot_seconds, program_flops


def detect_grid_size(ctx: TriageContext) -> list[Finding]:
    """nv.small-grid: launches with fewer programs than SMs doing work that matters.

    The work is summed over the launches of one kernel from one line in a forward: a Python loop
    of small-grid launches (a kernel per sample, per expert) leaves most SMs idle for all of them,
    whether or not the loop is also launch-bound."""
    found = Findings()
    sm_count = device(ctx, "sm_count")
    walked: dict[tuple[int, str], list[LaunchAnalysis]] = defaultdict(list)
    for analysis in ctx.analyses:
        walked[(analysis.case_index, analysis.kernel.name)].append(analysis)
    for trace in ctx.traces:
        sites: dict[tuple[str, Optional[int], int], list] = defaultdict(list)
        for launch in trace.launches:  # an autotuned launch: every config is judged on its own
            if (trace.index, launch.kernel) in walked:
                sites[(launch.kernel, launch.line, launch.variant)].append(launch)
        for (kernel, line, variant), launches in sites.items():
            if any(launch.programs >= sm_count for launch in launches):
                continue
            analyses = walked[(trace.index, kernel)]
            same_variant = [a for a in analyses if a.launch.variant == variant] or analyses
            walks = {a.launch.group: a for a in same_variant}
            moved = flops = 0.0
            for launch in launches:
                analysis = walks.get(launch.group, same_variant[0])
                moved += launch.operand_bytes()
                flops += program_flops(analysis.report) * launch.programs
            if moved < (16 << 20) and flops < 1e9 and not any(
                    idle_dot_seconds(walks.get(launch.group, same_variant[0]).report, launch.programs, sm_count)
                    >= IDLE_SECONDS for launch in launches):
                continue
            programs = max(launch.programs for launch in launches)
            many = f" in each of {len(launches)} launches" if len(launches) > 1 else ""
            detail = (f"grid {list(launches[0].grid)}: at most {programs} programs for {sm_count} SMs{many}, "
                      f"which move {moved / 2**20:.0f} MiB" + (f" and do {flops / 1e9:.1f} GFLOP" if flops else ""))
            found.add(ctx, "nv.small-grid", kernel, line, "too few programs to fill the GPU",
                      0.85 if programs <= sm_count // 2 else 0.7, [source_evidence(ctx, line, detail)],
                      analysis=walks.get(launches[0].group, same_variant[0]))
    return found.list()


# What one launch costs the host (Triton's launcher plus the driver).
LAUNCH_SECONDS = 4e-6


def _forward_seconds(ctx: TriageContext, trace: Any, launches: list) -> float:
    """A lower bound on the forward's device time: each launch at the slower of its bandwidth and
    tensor-core time, torch ops at bandwidth over the largest tensor they touch."""
    reports = {(a.case_index, a.launch.index): a.report for a in ctx.analyses}
    seconds = 0.0
    for launch in launches:
        moved = launch.operand_bytes()
        report = reports.get((trace.index, launch.index))
        flops = program_flops(report) * launch.programs if report is not None else 0.0
        seconds += max(moved / HBM_BYTES_PER_SECOND, flops / PEAK_FLOPS)
    return seconds + sum(2 * op.numel * 4 / HBM_BYTES_PER_SECOND for op in trace.torch_ops)


def detect_launch_count(ctx: TriageContext) -> list[Finding]:
    """nv.launch-bound: launches in a Python loop, or several launches per forward that each do
    too little to hide the launch overhead."""
    found = Findings()
    for trace in ctx.traces:
        if not trace.launches:
            continue
        launches = [launch for launch in trace.launches if launch.primary]
        by_line: dict[Optional[int], int] = defaultdict(int)
        for launch in launches:
            by_line[launch.line] += 1
        for line, count in by_line.items():
            if count >= 4:
                kernel = next(l.kernel for l in launches if l.line == line)
                detail = f"{count}{'+' if trace.truncated else ''} launches of {kernel} from this line in one forward"
                found.add(ctx, "nv.launch-bound", kernel, line, "launch overhead dominates", 0.85,
                          [source_evidence(ctx, line, detail)], trace.case)
        compute_ops = [op for op in trace.torch_ops]
        total = len(launches) + len(compute_ops)
        small = []
        for launch in launches:
            moved = launch.operand_bytes()
            if moved < (2 << 20):
                small.append(launch)
        if total >= 2 and len(small) == len(launches) and len(launches) >= 2:
            line = launches[0].line
            detail = (f"{total} launches per forward, each moving under 2 MiB: a few microseconds of work against "
                      "a few microseconds of launch overhead each")
            found.add(ctx, "nv.launch-bound", launches[0].kernel, line, "launch overhead dominates", 0.7,
                      [source_evidence(ctx, line, detail)], trace.case)
        elif total >= 6 and total * LAUNCH_SECONDS >= 0.5 * _forward_seconds(ctx, trace, launches):
            line = launches[0].line
            detail = (f"{len(launches)} Triton launches and {len(compute_ops)} torch ops per forward: about "
                      f"{total * LAUNCH_SECONDS * 1e6:.0f} us of launch overhead against "
                      f"{_forward_seconds(ctx, trace, launches) * 1e6:.0f} us of work")
            found.add(ctx, "nv.launch-bound", launches[0].kernel, line, "launch overhead dominates", 0.6,
                      [source_evidence(ctx, line, detail)], trace.case)
    return found.list()
