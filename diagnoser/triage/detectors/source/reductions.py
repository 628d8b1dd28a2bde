"""Data exchanged between threads (source level, NVIDIA): a layout conversion or a cross-warp
reduction goes through shared memory and a barrier, an atomic serialises in L2. Once per program
each costs little; these detectors find the ones on a hot path (nv.hot-layout-conversion,
nv.loop-carried-reduction, nv.atomic-contention).
"""
from __future__ import annotations

import math
from typing import Any

from ladder.diagnoser.evidence import Finding

from ...context import TriageContext
from ...interp.reductions import SCANS
from ..common import Findings, source_evidence
from .measures import HBM_BYTES_PER_SECOND, MIN_ACCESS_SHARE, reports, runtime_loops


def detect_layout_conversions(ctx: TriageContext) -> list[Finding]:
    """nv.hot-layout-conversion: transposes/permutes feeding a store, or inside a loop for
    anything but a dot operand; and a vector loaded every iteration (as many elements as threads
    or more) broadcast against a tile loaded in the same loop, which is converted to a slice of
    the tile's layout through shared memory every iteration. A permute of a dot's result on its
    way to the store is not one: the accumulator's MMA layout goes through shared memory to the
    store's layout in any GEMM epilogue, permuted or not (the compiled IR of plain GEMMs shows the
    same mma -> blocked conversion), so the permute adds no conversion of its own."""
    found = Findings()
    for name, report, analysis in reports(ctx):
        case = analysis.case if analysis else None
        for op in report.layout_ops:
            in_loop = bool(runtime_loops(report, op.loops))
            if op.op == "broadcast":
                loops = runtime_loops(report, op.loops)
                tiles = [a for a in report.accesses if a.op == "load" and len(a.shape) == 2 and not a.dot_operand
                         and loops and loops[-1] in a.loops and a.shape[op.axis] == op.vector.shape[0]]
                if tiles and _slice_conversion_crosses_warps(op.vector, tiles[0], op.axis, report.num_warps):
                    detail = (f"a vector loaded every iteration is broadcast against the {list(tiles[0].shape)} tile "
                              f"loaded on line {tiles[0].line}: each iteration converts it from its own layout to a "
                              "slice of the tile's, through shared memory (load it in the tile's layout, or hoist it)")
                    found.add(ctx, "nv.hot-layout-conversion", name, op.line, "layout conversion on a hot path", 0.65,
                              [{**source_evidence(ctx, op.line, detail), "in_loop": True}], case, analysis=analysis)
                continue
            if op.op != "trans":
                continue
            if op.feeds_store and not op.of_dot:
                detail = f"tl.{op.op} result is stored: a layout conversion through shared memory before every store"
                found.add(ctx, "nv.hot-layout-conversion", name, op.line, "layout conversion on a hot path", 0.75,
                          [source_evidence(ctx, op.line, detail)], case, analysis=analysis)
            elif in_loop and op.feeds_other and not op.feeds_dot:
                detail = f"tl.{op.op} inside a loop feeds element-wise work: a shared-memory round trip per iteration"
                found.add(ctx, "nv.hot-layout-conversion", name, op.line, "layout conversion on a hot path", 0.7,
                          [{**source_evidence(ctx, op.line, detail), "in_loop": True}], case, analysis=analysis)
    return found.list()


def _slice_conversion_crosses_warps(vector: Any, tile: Any, axis: int, num_warps: int) -> bool:
    """Does converting the vector from its own coalesced layout to a slice of the tile's layout
    move data between warps (through shared memory), rather than within each warp?"""
    from ... import axisinfo

    source = axisinfo.coalesced_layout(vector.info, vector.shape, vector.elem_bits, num_warps)
    target = axisinfo.coalesced_layout(tile.info, tile.shape, tile.elem_bits, num_warps)
    return any(not axisinfo.warps_holding(target, tile.shape, axis, i) <= axisinfo.warps_holding(source, vector.shape, 0, i)
               for i in range(vector.shape[0]))


def detect_loop_reductions(ctx: TriageContext) -> list[Finding]:
    """nv.loop-carried-reduction: a reduction across warps inside a loop (shared memory and a
    barrier every iteration) where accumulating a vector and reducing once would do.

    Only where the reduced value merely accumulates into state read after the loop (a running
    sum, an online max/sum pair kept per lane). A reduction whose value a store, dot or atomic of
    the same loop consumes (an attention row max feeding P @ V, a scan's chunk carry) is needed
    every iteration: no formulation reduces it once."""
    found = Findings()
    for name, report, analysis in reports(ctx):
        case = analysis.case if analysis else None
        for reduction in report.reductions:
            loops = runtime_loops(report, reduction.loops)
            if not loops or not reduction.cross_warp or reduction.outer_product or reduction.op in SCANS \
                    or reduction.used_in_loop:
                continue
            trips = [report.loops[i].trip_count for i in loops if report.loops[i].trip_count]
            if trips and max(trips) < 2:
                continue
            axis = "all axes" if reduction.axis is None or len(reduction.in_shape) <= 1 else f"axis {reduction.axis}"
            detail = (f"tl.{reduction.op} over {axis} of {list(reduction.in_shape)} inside a loop spans "
                      f"{report.num_warps} warps: a shared-memory exchange and barrier every iteration")
            found.add(ctx, "nv.loop-carried-reduction", name, reduction.line, "cross-warp reduction every iteration",
                      0.75, [source_evidence(ctx, reduction.line, detail)], case, analysis=analysis)
    return found.list()


# Updates per address (over one launch) from which atomics through data-dependent addresses
# serialise: a split-K reduction adds a handful per output, a histogram thousands per bin.
CONTENDED_UPDATES_PER_ADDRESS = 64
# Atomics on one address serialise in L2 at roughly one per nanosecond, while HBM streams
# HBM_BYTES_PER_SECOND. Same-address atomics matter once their serial time is a real share of
# the launch's.
SECONDS_PER_SERIAL_ATOMIC = 1e-9


def detect_atomics(ctx: TriageContext) -> list[Finding]:
    """nv.atomic-contention: atomics in a hot loop, every program hitting the same address, or
    atomics through data-dependent addresses (histograms, scatter-adds) whose launch issues many
    updates per address of the target: the target's size bounds the distinct addresses."""
    found = Findings()
    for name, report, analysis in reports(ctx):
        case = analysis.case if analysis else None
        programs = analysis.launch.programs if analysis else None
        for atomic in report.atomics:
            sem = atomic.sem or "acq_rel (default)"
            loops = runtime_loops(report, atomic.loops)
            if loops:
                detail = f"tl.{atomic.op} (sem={sem}) inside a loop: one serialised read-modify-write per iteration"
                found.add(ctx, "nv.atomic-contention", name, atomic.line, "contended atomics", 0.75,
                          [source_evidence(ctx, atomic.line, detail)], case, analysis=analysis)
            elif atomic.indirect:
                target = analysis.launch.tensors().get(atomic.base or "") if analysis else None
                if target is None or not target.numel or programs is None:
                    continue
                updates = programs * (math.prod(atomic.shape) if atomic.shape else 1)
                per_address = updates / target.numel
                if per_address >= CONTENDED_UPDATES_PER_ADDRESS:
                    detail = (f"tl.{atomic.op} (sem={sem}) through loaded indices: {updates} updates from {programs} "
                              f"programs land on the {target.numel} elements of `{atomic.base}`, about "
                              f"{per_address:.0f} per address, serialised in L2")
                    found.add(ctx, "nv.atomic-contention", name, atomic.line, "contended atomics", 0.75,
                              [source_evidence(ctx, atomic.line, detail)], case, analysis=analysis)
            elif not atomic.program_varying and (programs is None or programs >= 64):
                many = f"all {programs} programs" if programs else "every program"
                detail = f"tl.{atomic.op} (sem={sem}) to an address that does not depend on the program id: {many} serialise on it"
                if analysis is not None:
                    serial = programs * SECONDS_PER_SERIAL_ATOMIC
                    streaming = analysis.launch.operand_bytes() / HBM_BYTES_PER_SECOND
                    if serial < MIN_ACCESS_SHARE * streaming:
                        continue  # a few updates per program against a long stream: no measurable wait
                    detail += f" (about {serial * 1e6:.1f} us serialised against {streaming * 1e6:.1f} us of streaming)"
                found.add(ctx, "nv.atomic-contention", name, atomic.line, "contended atomics",
                          0.8 if programs else 0.6, [source_evidence(ctx, atomic.line, detail)], case, analysis=analysis)
    return found.list()
