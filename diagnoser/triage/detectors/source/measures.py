"""Quantities several source detectors measure from one walk of a kernel: the bytes an access or a
launch moves, a program's FLOPs and the time they take, the registers a program keeps live, the
instruction a dot lowers to. Each is defined once so that every family judges the same kernel by
the same numbers.
"""
from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Iterable, Optional

import numpy as np

from ladder.runner import hardware

from ...context import LaunchAnalysis, TriageContext
from ...interp.report import Dot, KernelReport

THREADS_PER_WARP = 32


def device(ctx: TriageContext, key: str) -> Any:
    """A property of the target device from its table; these are NVIDIA patterns, so a target whose
    table lacks the property (an Ascend part) is judged against the default NVIDIA device's."""
    value = ctx.device.get(key)
    return value if value is not None else hardware.for_target("cuda")[key]


def reports(ctx: TriageContext) -> Iterable[tuple[str, KernelReport, Optional[LaunchAnalysis]]]:
    """(kernel, report, analysis or None): per-launch walks when cases exist, else static walks."""
    if ctx.analyses:
        for analysis in ctx.analyses:
            yield analysis.kernel.name, analysis.report, analysis
    else:
        for name, report in ctx.static.items():
            yield name, report, None


def runtime_loops(report: KernelReport, loops: tuple[int, ...]) -> tuple[int, ...]:
    """Loops that stay loops after compilation (tl.static_range is unrolled)."""
    return tuple(i for i in loops if i in report.loops and report.loops[i].kind != "static_range")


def trips(report: KernelReport, loops: tuple[int, ...]) -> int:
    """How many times one program runs the body inside these loops (an unknown trip count counts once)."""
    total = 1
    for loop_id in loops:
        loop = report.loops.get(loop_id)
        total *= loop.trip_count if loop is not None and loop.trip_count else 1
    return total


# ------------------------------------------------------------------------------------------ bytes

# An access below this share of its program's bytes is not worth a finding of its own: making it
# wider would not change the kernel's time (a per-row scalar, a small output tile).
MIN_ACCESS_SHARE = 0.1


def access_bytes(report: KernelReport, access: Any) -> int:
    """Bytes one program moves through an access, over every trip of its loops."""
    return access.numel * max(access.elem_bits // 8, 1) * trips(report, access.loops)


def fastest_stride(access: Any) -> Optional[int]:
    """The real element stride along the dimension consecutive threads walk: a block pointer's
    order[0]; for a pointer tensor the dimension Coalesce orders first (the most contiguous one
    AxisInfo can prove, else the last), so a transposed load whose contiguity the compiler sees
    is coalesced although its last axis is strided."""
    strides = access.true_strides or ()
    if not strides:
        return None
    if access.block_ptr:
        dim = access.block_order[0] if access.block_order else len(strides) - 1
    else:
        dim = access.width.order[0] if access.width.order and access.info.contiguity[access.width.order[0]] > 1 \
            else len(strides) - 1
    return strides[dim] if 0 <= dim < len(strides) else None


def interleaved_groups(report: KernelReport) -> dict[int, list]:
    """Accesses at a small stride s whose s offsets together cover contiguous runs (even/odd lanes
    of an interleaved layout, the s fields of an array of structs), by node id. Each one is
    narrow, but the data is contiguous: one access of the whole run split in registers would be
    vectorised, so they are a vectorisation problem (nv.scalar-access), not an uncoalesced one."""
    candidates: dict[tuple, list] = defaultdict(list)
    for access in report.accesses:
        last = access.true_strides[-1] if access.true_strides else None
        if access.sample_offsets is None or not access.shape or last is None or not 1 < last <= 8:
            continue
        candidates[(access.base, access.op, access.shape, access.loops, last)].append(access)
    groups: dict[int, list] = {}
    for (_, _, shape, _, stride), members in candidates.items():
        if len(members) != stride:
            continue
        try:
            offsets = np.concatenate([np.broadcast_to(np.asarray(a.sample_offsets, dtype=np.int64), shape)
                                      for a in members], axis=-1)
        except ValueError:
            continue
        runs = np.sort(offsets.reshape(-1, offsets.shape[-1]), axis=-1)
        if runs.shape[-1] > 1 and bool(np.all(np.diff(runs, axis=-1) == 1)):
            for access in members:
                groups[access.node_id] = members
    return groups


# ---------------------------------------------------------------------------------- work and time

def dot_flops(dot: Dot) -> int:
    """Multiply-adds x 2 of one tl.dot call: 2 M N K for each batch of its operands."""
    return 2 * math.prod(dot.a_shape) * dot.b_shape[-1]


def program_flops(report: KernelReport) -> float:
    """Multiply-adds x 2 of one program's tl.dot calls, over every trip of their loops."""
    return sum(dot_flops(d) * trips(report, d.loops) for d in report.dots if d.b_shape)


# The rates triage's time estimates assume: what kernels sustain on the default NVIDIA device,
# dense fp16 tensor-core math and HBM streaming, a little under its roofline ceilings.
PEAK_FLOPS = hardware.for_target("cuda")["sustained_flops"]
HBM_BYTES_PER_SECOND = hardware.for_target("cuda")["sustained_bandwidth"]


def idle_dot_seconds(report: KernelReport, programs: int, sm_count: int) -> float:
    """A lower bound on the time a small grid of dot programs loses to idle SMs: the launch lasts
    at least one program's tensor-core work at one SM's share of the peak, and the SMs without a
    program contribute nothing meanwhile. Small GEMMs (a projection head, a batch of 64) have too
    few FLOPs in total to matter by the 1 GFLOP rule, yet a long K loop on a few SMs does."""
    if programs >= sm_count:
        return 0.0
    serial = program_flops(report) / (PEAK_FLOPS / sm_count)
    return serial * (1 - programs / sm_count)


# Idle-SM time from which a small grid is worth a finding: half a launch's overhead, since the
# bound above assumes each program runs at its SM's full tensor-core peak.
IDLE_SECONDS = 2e-6


# ----------------------------------------------------------------------------- registers and dots

@dataclass
class RegisterEstimate:
    total: float
    accumulators: float
    operands: float
    tile: float
    line: Optional[int]


def register_estimate(report: KernelReport) -> RegisterEstimate:
    """Registers per thread live at once: accumulators, mma.sync operands held in registers, and
    twice the largest element-wise tile (a value and what is computed from it)."""
    threads = THREADS_PER_WARP * report.num_warps
    tiles = {(t.line, t.shape, t.what): t for t in report.tiles}.values()
    acc_regs = sum(math.prod(t.shape) * t.bits / 32 / threads for t in tiles if t.what == "acc")
    operand_regs = 0.0
    for dot in report.dots:
        if dot_version(dot, report.num_warps) == 2:
            operand_regs += (math.prod(dot.a_shape) * dot.a_bits + math.prod(dot.b_shape) * dot.b_bits) / 32 / threads
    operand_lines = {a.line for a in report.accesses if a.dot_operand}
    acc_shapes = {t.shape for t in tiles if t.what == "acc"}
    elementwise = [t for t in tiles if t.what in ("load", "zeros") and t.line not in operand_lines
                   and t.shape not in acc_shapes]
    tile_regs = max((math.prod(t.shape) * t.bits / 32 / threads for t in elementwise), default=0.0)
    line = next((t.line for t in tiles if t.what == "acc"), None) or \
        (max(elementwise, key=lambda t: math.prod(t.shape)).line if elementwise else None)
    return RegisterEstimate(acc_regs + operand_regs + 2 * tile_regs, acc_regs, operand_regs, tile_regs, line)


def dot_version(dot: Any, num_warps: int) -> int:
    """Mirror of supportMMA (lib/Analysis/Utility.cpp): 3 = wgmma, 2 = mma.sync, 0 = FMA."""
    if dot.input_precision == "ieee" and dot.a_bits == 32:
        return 0
    if dot.a_bits == 64:
        return 2
    if len(dot.a_shape) != 2 or len(dot.b_shape) != 2:
        return 2
    m, k = dot.a_shape
    n = dot.b_shape[-1]
    if k < 256 // max(dot.a_bits, 1):
        return 2 if k >= 16 // max(dot.a_bits // 8, 1) else 0
    if num_warps % 4 != 0 or m % 64 != 0 or n % 16 != 0:
        return 2
    return 3
