"""Tiles and the on-chip resources they take (source level, NVIDIA): the work one program does
(nv.tiny-block, nv.oversized-block), the registers it keeps live (nv.register-spill), the shared
memory its pipelined dot operands need (nv.smem-limits-occupancy), and whether the software
pipeliner takes its K loop at all (nv.unpipelined-loop). One choice of tile and stages trades all
of these against each other, which is why they are judged side by side.
"""
from __future__ import annotations

import math
from typing import Any, Optional

from ladder.diagnoser.evidence import Finding

from ...context import TriageContext
from ...interp.report import KernelReport
from ..common import Findings, source_evidence
from .measures import (THREADS_PER_WARP, access_bytes, device, fastest_stride, interleaved_groups, program_flops,
                       register_estimate, reports, runtime_loops)


# ------------------------------------------------------------------------------------ block sizes

def _per_program_bytes(report: KernelReport) -> int:
    return sum(access_bytes(report, access) for access in report.accesses)


# Bytes in flight per SM that cover HBM latency on an H200 (Little's law: 4.8 TB/s x ~700 ns
# over 132 SMs); programs that together keep less than this in flight leave bandwidth unused.
IN_FLIGHT_PER_SM = 24 * 1024
MAX_PROGRAMS_PER_SM = 32
MAX_WARPS_PER_SM = 64


def detect_block_sizes(ctx: TriageContext) -> list[Finding]:
    """nv.tiny-block (too little work per program) and nv.oversized-block (a whole row or tile
    held in registers by one program).

    Tiny: under a vector per thread, and the programs an SM can hold together keep too few bytes
    in flight to cover HBM latency; or a dot program whose whole work is a small tile. Not when the
    bulk access is strided (then the width is the stride's doing: nv.strided-inner-axis), nor for
    a dot inside a loop (each program's work is the whole loop)."""
    found = Findings()
    sm_count = device(ctx, "sm_count")
    for name, report, analysis in reports(ctx):
        if analysis is None or not report.accesses:
            continue
        threads = THREADS_PER_WARP * report.num_warps
        programs = analysis.launch.programs
        tiles = [a for a in report.accesses if a.shape and not a.block_ptr]
        if not tiles:
            continue
        biggest = max(tiles, key=lambda a: a.numel)
        interleaved = interleaved_groups(report)
        per_thread = max([biggest.numel] + [sum(a.numel for a in g) for g in interleaved.values()]) / threads
        program_bytes = _per_program_bytes(report)
        has_dot = bool(report.dots)
        resident = min(MAX_PROGRAMS_PER_SM, MAX_WARPS_PER_SM // max(report.num_warps, 1))
        in_flight = resident * sum(a.numel * max(a.elem_bits // 8, 1) for a in tiles if a.op == "load")
        strided = fastest_stride(biggest) not in (None, 0, 1) and "load" not in biggest.deps \
            and biggest.node_id not in interleaved
        if not has_dot and per_thread < max(128 // biggest.elem_bits, 1) and program_bytes < 8192 \
                and programs > 2 * sm_count and in_flight < IN_FLIGHT_PER_SM and not strided:
            detail = (f"{programs} programs of {report.num_warps} warps each touch {program_bytes} bytes; the largest "
                      f"block {list(biggest.shape)} gives {per_thread:g} element(s) per thread, and the {resident} "
                      f"programs an SM holds keep {in_flight} bytes of loads in flight")
            found.add(ctx, "nv.tiny-block", name, biggest.line, "too little work per program", 0.8,
                      [source_evidence(ctx, biggest.line, detail)], analysis=analysis)
        if has_dot:
            dot = report.dots[0]
            m = dot.a_shape[-2] if len(dot.a_shape) >= 2 else 0
            n = dot.b_shape[-1] if dot.b_shape else 0
            if m and n and m * n <= 32 * 32 and programs > 2 * sm_count and program_flops(report) < 2 * 64 ** 3:
                detail = f"{programs} programs each compute a {m}x{n} output tile"
                found.add(ctx, "nv.tiny-block", name, dot.line, "too little work per program", 0.7,
                          [source_evidence(ctx, dot.line, detail)], analysis=analysis)
        for access in tiles:
            if runtime_loops(report, access.loops) or access.dot_operand or access.from_dot:
                continue
            bytes_per_thread = access.numel * access.elem_bits / 8 / threads
            if bytes_per_thread > 256 and access.numel >= 4096:
                detail = (f"one program holds {list(access.shape)} ({access.numel} elements) at once: "
                          f"{bytes_per_thread:g} bytes of registers per thread for this tensor alone")
                found.add(ctx, "nv.oversized-block", name, access.line, "one program holds a huge block in registers",
                          0.8, [source_evidence(ctx, access.line, detail)], analysis=analysis)
    return found.list()


# -------------------------------------------------------------------------------------- registers

def detect_register_pressure(ctx: TriageContext) -> list[Finding]:
    """nv.register-spill: estimated live registers per thread past the 255 a thread may have."""
    found = Findings()
    for name, report, analysis in reports(ctx):
        if analysis is None:
            continue
        estimate = register_estimate(report)
        if estimate.total > 255:
            detail = (f"about {estimate.total:.0f} registers per thread live at once (accumulators "
                      f"{estimate.accumulators:.0f}, dot operands {estimate.operands:.0f}, largest tile x2 "
                      f"{2 * estimate.tile:.0f}) with {report.num_warps} warps; a thread has 255")
            found.add(ctx, "nv.register-spill", name, estimate.line, "registers spill to local memory",
                      0.75 if estimate.total > 320 else 0.6, [source_evidence(ctx, estimate.line, detail)],
                      analysis=analysis)
    return found.list()


# ------------------------------------------------------------------- shared memory and pipelining

def _smem_bytes(report: KernelReport, num_stages: int) -> int:
    """Shared memory for dot operands: loads inside a loop get one buffer per pipeline stage,
    operands loaded once get one buffer."""
    total = 0
    for access in report.accesses:
        if access.op != "load" or not access.dot_operand:
            continue
        tile = access.numel * access.elem_bits // 8
        total += tile * (max(num_stages, 1) if runtime_loops(report, access.loops) else 1)
    return total


def detect_pipelining(ctx: TriageContext) -> list[Finding]:
    """nv.unpipelined-loop: a loop feeding tl.dot that the software pipeliner will not touch."""
    found = Findings()
    for name, report, analysis in reports(ctx):
        stages = analysis.launch.num_stages if analysis else _static_option(ctx, name, "num_stages", 3)
        case = analysis.case if analysis else None
        for loop in report.loops.values():
            if not loop.has_dot or loop.loads == 0:
                continue
            reasons = []
            effective = loop.num_stages if loop.num_stages is not None else stages
            if loop.kind == "while":
                reasons.append("a while loop (the pipeliner only handles scf.for)")
            elif loop.kind == "static_range":
                continue
            elif effective is not None and effective <= 1:
                reasons.append(f"num_stages={effective}")
            loads = [a for a in report.accesses if a.op == "load" and loop.loop_id in a.loops and a.dot_operand]
            narrow = [a for a in loads if analysis is not None and a.width.vector_bits < 32 and not a.block_ptr]
            if narrow:
                reasons.append(f"operand loads of {narrow[0].width.vector_bits} bits per thread are too narrow for cp.async (4 bytes minimum)")
            if not reasons:
                continue
            detail = "K-loop feeding tl.dot is not software-pipelined: " + "; ".join(reasons)
            found.add(ctx, "nv.unpipelined-loop", name, loop.line, "dot loop without async copies", 0.8,
                      [source_evidence(ctx, loop.line, detail)], case, analysis=analysis)
    return found.list()


def _static_option(ctx: TriageContext, kernel: str, option: str, default: Any) -> Any:
    from ...context import static_launch_values

    for site in ctx.source.launches:
        if site.kernel == kernel:
            return static_launch_values(ctx.source, site).get(option, default)
    return default


def shared_memory_limit(ctx: TriageContext, report: KernelReport, stages: int, programs: int) -> Optional[tuple[str, float]]:
    """(why, confidence) when pipelined dot-operand buffers exceed what a block may use, or
    leave fewer than 8 warps resident per SM on a grid that fills every SM; else None."""
    per_block = device(ctx, "shared_memory_per_block")
    per_sm = device(ctx, "shared_memory_per_sm")
    reserved = device(ctx, "shared_memory_reserved_per_block")
    smem = _smem_bytes(report, stages)
    if not smem or not report.dots:
        return None
    dot = report.dots[0]
    if smem > per_block:
        return (f"{stages} stages x operand tiles {list(dot.a_shape)}+{list(dot.b_shape)} need {smem} bytes of "
                f"shared memory; a block may use {per_block}: the launch fails (out of resources)"), 0.9
    resident = per_sm // (smem + reserved)
    warps = resident * report.num_warps
    fills = programs >= resident * device(ctx, "sm_count")
    if warps < 8 and fills:
        return (f"{smem} bytes of shared memory per program ({stages} stages) leave {resident} program(s) "
                f"of {report.num_warps} warps per SM: {warps} warps to hide latency"), 0.6
    halved = _smem_bytes(report, math.ceil(stages / 2))
    if resident == 1 and stages > DEEP_STAGES and fills and per_sm // (halved + reserved) >= 2 \
            and _registers_allow(ctx, report, 2):
        return (f"{smem} bytes of shared memory per program ({stages} stages) leave one program per SM although "
                f"its registers would allow two; {math.ceil(stages / 2)} stages would fit two, whose loads and "
                "epilogues overlap"), 0.6
    return None


# Pipeline depth past which more stages buy no latency hiding on Hopper (3-4 cover HBM latency
# for a 64-deep K step); stages beyond it only cost residency.
DEEP_STAGES = 4
# Registers per thread a dot kernel needs besides its tiles: addresses, indices, loop state.
REGISTER_OVERHEAD = 48


def _registers_allow(ctx: TriageContext, report: KernelReport, programs: int) -> bool:
    registers = device(ctx, "registers_per_sm")
    threads = THREADS_PER_WARP * report.num_warps
    return (register_estimate(report).total + REGISTER_OVERHEAD) * threads * programs <= registers


def detect_shared_memory(ctx: TriageContext) -> list[Finding]:
    """nv.smem-limits-occupancy: pipelined operand buffers that exceed a block's shared memory or
    leave too few warps resident per SM."""
    found = Findings()
    for name, report, analysis in reports(ctx):
        if analysis is None:
            continue
        limit = shared_memory_limit(ctx, report, analysis.launch.num_stages, analysis.launch.programs)
        if limit is not None:
            detail, confidence = limit
            line = report.dots[0].line
            found.add(ctx, "nv.smem-limits-occupancy", name, line, "shared memory limits or prevents residency",
                      confidence, [source_evidence(ctx, line, detail)], analysis=analysis)
    return found.list()
