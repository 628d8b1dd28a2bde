"""Source-level detectors for NVIDIA (rung 1): the kernel as written plus what each case launches.

Each detector takes the `TriageContext` and returns findings. They read the walk of every
(case, launch) (`ctx.analyses`), which carries both what the compiler will be able to prove
(AxisInfo mirror) and what is actually true for the case; without a problem they fall back to
the kernel walked with the launch site's literals (`ctx.static`) and say less.
"""
from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Iterable, Optional

import numpy as np

from diagnoser.evidence import Finding

from ..context import LaunchAnalysis, TriageContext
from ..interp.reductions import SCANS
from ..interp.report import KernelReport
from .common import Findings, case_label, is_power_of_two, source_evidence

THREADS_PER_WARP = 32


def _device(ctx: TriageContext, key: str, default: Any) -> Any:
    return ctx.device.get(key, default)


def _reports(ctx: TriageContext) -> Iterable[tuple[str, KernelReport, Optional[LaunchAnalysis]]]:
    """(kernel, report, analysis or None): per-launch walks when cases exist, else static walks."""
    if ctx.analyses:
        for analysis in ctx.analyses:
            yield analysis.kernel.name, analysis.report, analysis
    else:
        for name, report in ctx.static.items():
            yield name, report, None


def _loop_kinds(report: KernelReport, loops: tuple[int, ...]) -> list[str]:
    return [report.loops[i].kind for i in loops if i in report.loops]


def _runtime_loops(report: KernelReport, loops: tuple[int, ...]) -> tuple[int, ...]:
    """Loops that stay loops after compilation (tl.static_range is unrolled)."""
    return tuple(i for i in loops if i in report.loops and report.loops[i].kind != "static_range")


def _trips(report: KernelReport, loops: tuple[int, ...]) -> int:
    trips = 1
    for loop_id in loops:
        loop = report.loops.get(loop_id)
        trips *= loop.trip_count if loop is not None and loop.trip_count else 1
    return trips


# ------------------------------------------------------------------------------------ accesses

# An access below this share of its program's bytes is not worth a finding of its own: making it
# wider would not change the kernel's time (a per-row scalar, a small output tile).
MIN_ACCESS_SHARE = 0.1


def access_bytes(report: KernelReport, access: Any) -> int:
    """Bytes one program moves through an access, over every trip of its loops."""
    return access.numel * max(access.elem_bits // 8, 1) * _trips(report, access.loops)


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


# A launch that moves less than this finishes within HBM latency plus launch overhead (1 MiB is
# a quarter of a microsecond of bandwidth): the width of its accesses does not change its time.
LATENCY_BOUND_BYTES = 1 << 20


def latency_bound(ctx: TriageContext, kernel: str) -> bool:
    """Every analysed launch of the kernel moves under LATENCY_BOUND_BYTES (a final reduction of
    a few hundred partials, a scalar fix-up)."""
    launches = [a for a in ctx.analyses if a.kernel.name == kernel]
    return bool(launches) and all(_launch_bytes(a) < LATENCY_BOUND_BYTES for a in launches)


def detect_access_width(ctx: TriageContext) -> list[Finding]:
    """nv.scalar-access and nv.strided-inner-axis from each access's predicted vector width
    (AxisInfo + Coalesce mirror) against the width the case's real addresses allow.

    Only accesses that carry a real share of the program's bytes count; an access whose real
    addresses are not contiguous (a gather, a broadcast) is neither pattern; interleaved accesses
    that together cover contiguous runs are nv.scalar-access.

    A hint is only claimed where it is true in every case: where the mask alone limits the width
    and some case's size is not a multiple of the vector, the finding is padding (or peeling the
    last block), at low confidence."""
    found = Findings()
    verdicts: dict[tuple[str, int], list] = {}
    for name, report, analysis in _reports(ctx):
        if analysis is None:
            continue  # alignment depends on the arguments: only judged with real cases
        if _launch_bytes(analysis) < LATENCY_BOUND_BYTES:
            continue  # a launch this small is all latency: wider accesses would not shorten it
        total = sum(access_bytes(report, a) for a in report.accesses) or 1
        interleaved = interleaved_groups(report)
        for access in report.accesses:
            if not access.shape or access.op == "atomic":
                continue
            strides = access.true_strides or ()
            if access.block_ptr:
                fastest = fastest_stride(access)
                if fastest not in (None, 0, 1) and not access.dot_operand and \
                        access_bytes(report, access) >= MIN_ACCESS_SHARE * total:
                    detail = (f"{access.op} through a block pointer over {access.base or 'a tensor'} {list(access.shape)}: "
                              f"its fastest dimension (order[0]) steps {fastest} elements in memory")
                    found.add(ctx, "nv.strided-inner-axis", name, access.line,
                              "block access walks a strided axis fastest", 0.8,
                              [source_evidence(ctx, access.line, detail, access.end_line)], analysis=analysis)
                continue
            threads = THREADS_PER_WARP * report.num_warps
            full_vector = max(128 // access.elem_bits, 1)
            last = strides[-1] if strides else None
            unit_axes = [d for d, s in enumerate(strides) if s == 1]
            group = interleaved.get(access.node_id)
            if group is not None:
                if sum(access_bytes(report, a) for a in group) < MIN_ACCESS_SHARE * total:
                    continue
                lines = ", ".join(str(a.line) for a in group)
                detail = (f"{access.op}s of {access.base or 'a tensor'} {list(access.shape)} at stride {last} (lines "
                          f"{lines}) together cover contiguous runs, yet each moves {access.width.vector_bits} bits per "
                          f"thread per instruction; one contiguous access of the whole run, split in registers "
                          f"(tl.reshape + tl.split), would move 128")
                found.add(ctx, "nv.scalar-access", name, access.line, "global accesses not vectorized", 0.75,
                          [source_evidence(ctx, access.line, detail, access.end_line)], analysis=analysis)
                continue
            if last not in (0, 1) and last is not None and not access.dot_operand:
                if fastest_stride(access) == 1:
                    continue  # the compiler sees the contiguous axis and lays threads along it: coalesced
                detail = (f"{access.op} of {access.base or 'a tensor'} {list(access.shape)}: the last block axis "
                          f"steps {last} elements in memory"
                          + (f"; axis {unit_axes[0]} is the contiguous one" if unit_axes else "; no axis is contiguous"))
                found.add(ctx, "nv.strided-inner-axis", name, access.line,
                          "block access walks a strided axis fastest", 0.8 if unit_axes else 0.7,
                          [source_evidence(ctx, access.line, detail, access.end_line)], analysis=analysis)
                continue
            cap = max(min(full_vector, access.numel // threads), 1)
            if cap <= 1:
                continue  # one element per thread: scalar whatever the alignment (see nv.tiny-block)
            if last is None and access.true_vec is None:
                continue
            if access_bytes(report, access) < MIN_ACCESS_SHARE * total:
                continue
            predicted = access.width.per_thread
            possible = min(access.true_vec or 1, cap)
            if predicted >= cap or (predicted >= possible and access.width.vector_bits > 32):
                continue
            limit = "mask" if access.masked and access.width.per_thread < _unmasked_width(access) else "address"
            tail = masked_tail(analysis, access, min(full_vector, cap)) if limit == "mask" else None
            if tail is not None:
                size, value, vector = tail
                verdict = ("tail", f"the mask cuts at {size}={value}, not a multiple of {vector}")
            elif predicted >= possible:
                if last != 1:
                    continue  # not contiguous in fact (a gather, a broadcast): no vector to be had
                verdict = ("misaligned", f"the real addresses are not 16-byte aligned or not contiguous in runs of "
                                         f"{full_vector} (sizes/strides not multiples of {full_vector})")
            else:
                verdict = ("hint", f"runs of {possible} contiguous, aligned elements are true but the compiler "
                                   "cannot prove them")
            verdicts.setdefault((name, access.line), []).append((analysis, access, limit, *verdict))
    for (name, line), items in verdicts.items():
        _report_scalar_access(ctx, found, name, line, items)
    return found.list()


def _report_scalar_access(ctx: TriageContext, found: Findings, name: str, line: int, items: list) -> None:
    """One nv.scalar-access finding for an access line over every case that showed it. A hint is
    claimed only where it is true in every case; where some case's data is misaligned, or its
    mask cuts a vector, a hint would assert something false there: the fix is padding (or a
    per-case specialisation), at lower confidence."""
    by_kind: dict[str, list] = defaultdict(list)
    for analysis, access, limit, kind, why in items:
        by_kind[kind].append((analysis, access, limit, why))
    _, access, limit, _ = items[0][:4]
    head = (f"{access.op} of {access.base or 'a tensor'} {list(access.shape)} moves {access.width.vector_bits} bits "
            f"per thread per instruction (limited by the {limit})")
    if set(by_kind) == {"hint"}:
        detail = (f"{head}; {by_kind['hint'][0][3]} (a tl.multiple_of / tl.max_contiguous / tl.max_constancy hint "
                  "would be true in every case)")
        confidence = 0.85
    else:
        parts = [f"{why} for {_case_list(entries)}" for kind in ("misaligned", "tail", "hint")
                 for entries in [by_kind.get(kind)] if entries for why in [entries[0][3]]]
        detail = (f"{head}; " + "; ".join(parts) + ". No hint is true in every case: padding the tensors to "
                  "16-byte multiples (or loading full blocks unmasked and masking only the last, or specialising "
                  "per case with a heuristic constexpr) would let the compiler vectorise")
        confidence = 0.65 if "misaligned" in by_kind else 0.45
    for analysis, access, _, _, _ in items:
        found.add(ctx, "nv.scalar-access", name, line, "global accesses not vectorized", confidence,
                  [source_evidence(ctx, line, detail, access.end_line)], analysis=analysis)


def _case_list(entries: list) -> str:
    labels = list(dict.fromkeys(case_label(analysis.case) for analysis, *_ in entries))
    return "case " + "; ".join(labels) if len(labels) == 1 else "cases " + "; ".join(labels)


def masked_tail(analysis: Optional[LaunchAnalysis], access: Any, vector: int) -> Optional[tuple[str, int, int]]:
    """(size argument, its value, vector) when the access's fastest dimension is masked against a
    size that, in this launch, is not a multiple of the vector width: the mask then genuinely cuts
    a vector, and no hint is true. None when every such size is a multiple (a hint would be true)."""
    if analysis is None or vector <= 1 or not access.dims:
        return None
    fastest = access.width.order[0] if access.width.order else len(access.dims) - 1
    params = access.dims[fastest] if 0 <= fastest < len(access.dims) else frozenset()
    sizes = analysis.launch.int_args()
    for tile, size in sorted(analysis.report.bounds):
        if tile in params and size in sizes and sizes[size] % vector:
            return size, sizes[size], vector
    return None


def genuine_tail(ctx: TriageContext, kernel: str, line: Optional[int]) -> bool:
    """Some analysed case masks the access on this line against a size that is not a multiple
    of the vector width its addresses would allow (see `masked_tail`)."""
    for analysis in ctx.analyses:
        if analysis.kernel.name != kernel:
            continue
        threads = THREADS_PER_WARP * analysis.report.num_warps
        for access in analysis.report.accesses:
            end = access.end_line or access.line
            if line is None or not access.line <= line <= end or not access.masked:
                continue
            cap = max(min(max(128 // access.elem_bits, 1), access.numel // threads), 1)
            if masked_tail(analysis, access, cap) is not None:
                return True
    return False


def _unmasked_width(access: Any) -> int:
    from .. import axisinfo

    return axisinfo.access_width(access.info, access.shape, access.elem_bits, 4).per_thread


# --------------------------------------------------------------------------------- block sizes

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
    sm_count = _device(ctx, "sm_count", 132)
    for name, report, analysis in _reports(ctx):
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
            if m and n and m * n <= 32 * 32 and programs > 2 * sm_count and _program_flops(report) < 2 * 64 ** 3:
                detail = f"{programs} programs each compute a {m}x{n} output tile"
                found.add(ctx, "nv.tiny-block", name, dot.line, "too little work per program", 0.7,
                          [source_evidence(ctx, dot.line, detail)], analysis=analysis)
        for access in tiles:
            if _runtime_loops(report, access.loops) or access.dot_operand or access.from_dot:
                continue
            bytes_per_thread = access.numel * access.elem_bits / 8 / threads
            if bytes_per_thread > 256 and access.numel >= 4096:
                detail = (f"one program holds {list(access.shape)} ({access.numel} elements) at once: "
                          f"{bytes_per_thread:g} bytes of registers per thread for this tensor alone")
                found.add(ctx, "nv.oversized-block", name, access.line, "one program holds a huge block in registers",
                          0.8, [source_evidence(ctx, access.line, detail)], analysis=analysis)
    return found.list()


# ------------------------------------------------------------------------------ registers, dots

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
        if _dot_version(dot, report.num_warps) == 2:
            operand_regs += (math.prod(dot.a_shape) * dot.a_bits + math.prod(dot.b_shape) * dot.b_bits) / 32 / threads
    operand_lines = {a.line for a in report.accesses if a.dot_operand}
    acc_shapes = {t.shape for t in tiles if t.what == "acc"}
    elementwise = [t for t in tiles if t.what in ("load", "zeros") and t.line not in operand_lines
                   and t.shape not in acc_shapes]
    tile_regs = max((math.prod(t.shape) * t.bits / 32 / threads for t in elementwise), default=0.0)
    line = next((t.line for t in tiles if t.what == "acc"), None) or \
        (max(elementwise, key=lambda t: math.prod(t.shape)).line if elementwise else None)
    return RegisterEstimate(acc_regs + operand_regs + 2 * tile_regs, acc_regs, operand_regs, tile_regs, line)


def detect_register_pressure(ctx: TriageContext) -> list[Finding]:
    """nv.register-spill: estimated live registers per thread past the 255 a thread may have."""
    found = Findings()
    for name, report, analysis in _reports(ctx):
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


def _dot_version(dot: Any, num_warps: int) -> int:
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


def masked_rows(analysis: Optional[LaunchAnalysis], dot: Any) -> Optional[int]:
    """The rows a dot really has in this launch: the size argument its M tile is masked against
    (`offs_m < n_rows`), or None where the source does not say."""
    if analysis is None:
        return None
    sizes = analysis.launch.int_args()
    rows = [sizes[size] for tile, size in analysis.report.bounds if tile in dot.m_params and size in sizes]
    return max(rows) if rows else None


def rows_below_wgmma(ctx: TriageContext, kernel: str) -> bool:
    """Every analysed launch of the kernel masks its dots to fewer than 64 rows: mma.sync is then
    the right instruction (wgmma's 64-row minimum would only pad)."""
    analyses = [a for a in ctx.analyses if a.kernel.name == kernel and a.report.dots]
    rows = [masked_rows(a, d) for a in analyses for d in a.report.dots]
    return bool(rows) and all(r is not None and r < 64 for r in rows)


def detect_dot_lowering(ctx: TriageContext) -> list[Finding]:
    """nv.mma-v2-on-hopper (wgmma conditions not met) and nv.no-tensor-core (ieee fp32 dots, or
    matrix products written as broadcast-multiply + sum / outer products in a loop)."""
    found = Findings()
    for name, report, analysis in _reports(ctx):
        case = analysis.case if analysis else None
        num_warps = report.num_warps
        for dot in report.dots:
            if not dot.a_shape or not dot.b_shape:
                continue
            version = _dot_version(dot, num_warps)
            if version == 0 and dot.input_precision == "ieee":
                detail = "fp32 tl.dot with input_precision='ieee' (or allow_tf32=False) runs on CUDA cores (FMA)"
                found.add(ctx, "nv.no-tensor-core", name, dot.line, "matrix product on CUDA cores", 0.85,
                          [source_evidence(ctx, dot.line, detail)], case, analysis=analysis)
            elif version == 2:
                rows = masked_rows(analysis, dot)
                if rows is not None and rows < 64 and dot.a_shape[-2] < 64 and num_warps % 4 == 0:
                    continue  # M itself is below wgmma's 64 rows: mma.sync is the right instruction
                m = dot.a_shape[-2]
                n = dot.b_shape[-1]
                reasons = []
                if len(dot.a_shape) == 3:
                    reasons.append("a batched (3-D) dot")
                if num_warps % 4:
                    reasons.append(f"num_warps={num_warps} is not a multiple of 4")
                if m % 64:
                    reasons.append(f"BLOCK_M={m} is not a multiple of 64")
                if n % 16:
                    reasons.append(f"BLOCK_N={n} is not a multiple of 16")
                if dot.a_bits == 64:
                    reasons.append("fp64 operands")
                if not reasons:
                    reasons.append(f"K={dot.a_shape[-1]} below the wgmma minimum")
                detail = f"tl.dot {list(dot.a_shape)} x {list(dot.b_shape)} lowers to mma.sync: " + "; ".join(reasons)
                found.add(ctx, "nv.mma-v2-on-hopper", name, dot.line, "tl.dot uses mma.sync instead of wgmma", 0.85,
                          [source_evidence(ctx, dot.line, detail)], case, analysis=analysis)
        for reduction in report.reductions:
            if (reduction.outer_product or reduction.pairwise) and len(reduction.in_shape) == 3 \
                    and min(reduction.in_shape) >= 8:
                what = ("a broadcast product" if reduction.outer_product else
                        "a function of broadcast differences (a pairwise distance: |a|^2 + |b|^2 - 2 a.b is a tl.dot)")
                detail = (f"tl.{reduction.op} over axis {reduction.axis} of {what} "
                          f"{list(reduction.in_shape)}: a matmul on CUDA cores")
                found.add(ctx, "nv.no-tensor-core", name, reduction.line, "matrix product on CUDA cores", 0.85,
                          [source_evidence(ctx, reduction.line, detail)], case, analysis=analysis)
            programs = analysis.launch.programs if analysis else 0
            if reduction.shared_matvec and min(reduction.in_shape) >= 16 and \
                    programs // MMA_MIN_ROWS >= _device(ctx, "sm_count", 132) // 2:
                detail = (f"tl.sum over axis {reduction.axis} of a {list(reduction.in_shape)} matrix, the same for all "
                          f"{programs} programs, times each program's own vector: together a matrix product done as "
                          f"GEMVs on CUDA cores; {MMA_MIN_ROWS} or more vectors per program make it a tl.dot")
                found.add(ctx, "nv.no-tensor-core", name, reduction.line, "matrix product on CUDA cores", 0.75,
                          [source_evidence(ctx, reduction.line, detail)], case, analysis=analysis)
        if not report.dots:
            for outer in report.outer_products:
                if _runtime_loops(report, outer.loops) and len(outer.shape) == 2 and min(outer.shape) >= 16:
                    detail = (f"rank-1 updates {list(outer.shape)} accumulated in a loop: a matmul on CUDA cores "
                              "(one K step per iteration)")
                    found.add(ctx, "nv.no-tensor-core", name, outer.line, "matrix product on CUDA cores", 0.8,
                              [source_evidence(ctx, outer.line, detail)], case, analysis=analysis)
    return found.list()


# The fewest rows a tensor-core dot takes (mma.sync m16): programs that each multiply one vector
# by a shared matrix must be grouped this many to a program.
MMA_MIN_ROWS = 16


def _smem_bytes(report: KernelReport, num_stages: int) -> int:
    """Shared memory for dot operands: loads inside a loop get one buffer per pipeline stage,
    operands loaded once get one buffer."""
    total = 0
    for access in report.accesses:
        if access.op != "load" or not access.dot_operand:
            continue
        tile = access.numel * access.elem_bits // 8
        total += tile * (max(num_stages, 1) if _runtime_loops(report, access.loops) else 1)
    return total


def detect_pipelining(ctx: TriageContext) -> list[Finding]:
    """nv.unpipelined-loop: a loop feeding tl.dot that the software pipeliner will not touch."""
    found = Findings()
    for name, report, analysis in _reports(ctx):
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
    from ..context import static_launch_values

    for site in ctx.source.launches:
        if site.kernel == kernel:
            return static_launch_values(ctx.source, site).get(option, default)
    return default


def shared_memory_limit(ctx: TriageContext, report: KernelReport, stages: int, programs: int) -> Optional[tuple[str, float]]:
    """(why, confidence) when pipelined dot-operand buffers exceed what a block may use, or
    leave fewer than 8 warps resident per SM on a grid that fills every SM; else None."""
    per_block = _device(ctx, "shared_memory_per_block", 232448)
    per_sm = _device(ctx, "shared_memory_per_sm", 233472)
    reserved = _device(ctx, "shared_memory_reserved_per_block", 1024)
    smem = _smem_bytes(report, stages)
    if not smem or not report.dots:
        return None
    dot = report.dots[0]
    if smem > per_block:
        return (f"{stages} stages x operand tiles {list(dot.a_shape)}+{list(dot.b_shape)} need {smem} bytes of "
                f"shared memory; a block may use {per_block}: the launch fails (out of resources)"), 0.9
    resident = per_sm // (smem + reserved)
    warps = resident * report.num_warps
    fills = programs >= resident * _device(ctx, "sm_count", 132)
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
    registers = _device(ctx, "registers_per_sm", 65536)
    threads = THREADS_PER_WARP * report.num_warps
    return (register_estimate(report).total + REGISTER_OVERHEAD) * threads * programs <= registers


def detect_shared_memory(ctx: TriageContext) -> list[Finding]:
    """nv.smem-limits-occupancy: pipelined operand buffers that exceed a block's shared memory or
    leave too few warps resident per SM."""
    found = Findings()
    for name, report, analysis in _reports(ctx):
        if analysis is None:
            continue
        limit = shared_memory_limit(ctx, report, analysis.launch.num_stages, analysis.launch.programs)
        if limit is not None:
            detail, confidence = limit
            line = report.dots[0].line
            found.add(ctx, "nv.smem-limits-occupancy", name, line, "shared memory limits or prevents residency",
                      confidence, [source_evidence(ctx, line, detail)], analysis=analysis)
    return found.list()


# ----------------------------------------------------------------------- layouts and reductions

def detect_layout_conversions(ctx: TriageContext) -> list[Finding]:
    """nv.hot-layout-conversion: transposes/permutes feeding a store, or inside a loop for
    anything but a dot operand; and a vector loaded every iteration (as many elements as threads
    or more) broadcast against a tile loaded in the same loop, which is converted to a slice of
    the tile's layout through shared memory every iteration."""
    found = Findings()
    for name, report, analysis in _reports(ctx):
        case = analysis.case if analysis else None
        for op in report.layout_ops:
            in_loop = bool(_runtime_loops(report, op.loops))
            if op.op == "broadcast":
                loops = _runtime_loops(report, op.loops)
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
            if op.feeds_store:
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
    from .. import axisinfo

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
    for name, report, analysis in _reports(ctx):
        case = analysis.case if analysis else None
        for reduction in report.reductions:
            loops = _runtime_loops(report, reduction.loops)
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


# ---------------------------------------------------------------------------- grids, launches

def detect_grouped_order(ctx: TriageContext) -> list[Finding]:
    """nv.gemm-no-grouped-order: a tiled GEMM whose programs walk output tiles row by row, on
    more programs than SMs, with at least 4 tiles each way, where the operand each wave walks
    again does not fit in half the L2 (the other operand streams through it too, and an H100/H200
    L2 is two partitions); when it fits, grouping saves no HBM traffic."""
    found = Findings()
    sm_count = _device(ctx, "sm_count", 132)
    for name, report, analysis in _reports(ctx):
        looped_dots = [d for d in report.dots if _runtime_loops(report, d.loops)]
        if not looped_dots or report.pid_clamped:
            continue
        stores = [a for a in report.accesses if a.op in ("store", "atomic") and a.shape and len(a.shape) == 2]
        if not stores:
            continue
        store = stores[0]
        dot = looped_dots[0]
        if analysis is not None:
            grid = analysis.launch.grid
            m, n = dot.a_shape[-2], dot.b_shape[-1]
            tiles_m = tiles_n = None
            c = analysis.launch.tensors()
            out = c.get(store.base or "")
            if out is not None and len(out.shape) >= 2:
                tiles_m = math.ceil(out.shape[-2] / m)
                tiles_n = math.ceil(out.shape[-1] / n)
            programs = analysis.launch.programs
            if programs <= sm_count or (tiles_m is not None and (tiles_m < 4 or tiles_n < 4)):
                continue
            restreamed = _restreamed_operand(analysis, dot)
            l2 = _device(ctx, "l2_bytes", L2_BYTES)
            if restreamed is not None and restreamed[1] <= l2 / 2:
                continue  # the operand every wave walks again stays in L2: grouping saves nothing
            walk = ("2-D grid: program_id(0) and program_id(1) pick the tile"
                    if grid[1] > 1 else "1-D grid split with // and % into row-major tiles")
            name_, size = restreamed if restreamed is not None else ("B", None)
            detail = (f"{programs} output tiles ({tiles_m} x {tiles_n}) visited in plain order ({walk}); each wave "
                      f"walks all of {name_} again" + (f" ({size / 2**20:.0f} MiB, more than half the "
                                                        f"{l2 / 2**20:.0f} MiB L2)" if size else "")
                      + ", re-reading it from HBM")
            found.add(ctx, "nv.gemm-no-grouped-order", name, dot.line, "GEMM tiles in plain row-major order", 0.75,
                      [source_evidence(ctx, dot.line, detail)], analysis=analysis)
        elif {"pid0", "pid1"} <= set(store.deps) or "pid" in store.deps:
            detail = "tiled GEMM with no grouped (GROUP_SIZE_M) program ordering"
            found.add(ctx, "nv.gemm-no-grouped-order", name, dot.line, "GEMM tiles in plain row-major order", 0.55,
                      [source_evidence(ctx, dot.line, detail)])
    return found.list()


L2_BYTES = 50 * 2 ** 20


def _restreamed_operand(analysis: LaunchAnalysis, dot: Any) -> Optional[tuple[str, int]]:
    """("A" or "B", its bytes): the operand a plain program order walks again in every wave.
    Programs along the fastest grid axis share the other operand's tile; with N fastest (the
    usual pid_m = pid // num_pid_n, or program_id(0) indexing N) all of B (K x N) is streamed once
    per row of tiles, with M fastest all of A. None where the GEMM's size is unknown."""
    m, n, k = _gemm_dims(analysis)
    if not (m and n and k):
        return None
    a_loads = [a for a in analysis.report.accesses if a.node_id in dot.a_origins]
    m_fastest = analysis.launch.grid[1] > 1 and any("pid0" in a.deps for a in a_loads)
    if m_fastest:
        return "A", m * k * dot.a_bits // 8
    return "B", k * n * dot.b_bits // 8


def _launch_bytes(analysis: LaunchAnalysis) -> int:
    return sum(a.numel * a.elem_size for a in analysis.launch.tensors().values())


def _program_flops(report: KernelReport) -> float:
    """Multiply-adds x 2 of one program's tl.dot calls, over every trip of their loops."""
    return sum(2 * math.prod(d.a_shape) * d.b_shape[-1] * _trips(report, d.loops) for d in report.dots if d.b_shape)


def detect_grid_size(ctx: TriageContext) -> list[Finding]:
    """nv.small-grid: launches with fewer programs than SMs doing work that matters.

    The work is summed over the launches of one kernel from one line in a forward: a Python loop
    of small-grid launches (a kernel per sample, per expert) leaves most SMs idle for all of them,
    whether or not the loop is also launch-bound."""
    found = Findings()
    sm_count = _device(ctx, "sm_count", 132)
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
                moved += sum(a.numel * a.elem_size for a in launch.tensors().values())
                flops += _program_flops(analysis.report) * launch.programs
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


def idle_dot_seconds(report: KernelReport, programs: int, sm_count: int) -> float:
    """A lower bound on the time a small grid of dot programs loses to idle SMs: the launch lasts
    at least one program's tensor-core work at one SM's share of the peak, and the SMs without a
    program contribute nothing meanwhile. Small GEMMs (a projection head, a batch of 64) have too
    few FLOPs in total to matter by the 1 GFLOP rule, yet a long K loop on a few SMs does."""
    if programs >= sm_count:
        return 0.0
    serial = _program_flops(report) / (PEAK_FLOPS / sm_count)
    return serial * (1 - programs / sm_count)


# Idle-SM time from which a small grid is worth a finding: half a launch's overhead, since the
# bound above assumes each program runs at its SM's full tensor-core peak.
IDLE_SECONDS = 2e-6

# What one launch costs the host (Triton's launcher plus the driver), and the H200 peaks the work
# is timed against: dense fp16 tensor-core math, HBM bandwidth.
LAUNCH_SECONDS = 4e-6
PEAK_FLOPS = 700e12


def _forward_seconds(ctx: TriageContext, trace: Any, launches: list) -> float:
    """A lower bound on the forward's device time: each launch at the slower of its bandwidth and
    tensor-core time, torch ops at bandwidth over the largest tensor they touch."""
    reports = {(a.case_index, a.launch.index): a.report for a in ctx.analyses}
    seconds = 0.0
    for launch in launches:
        moved = sum(a.numel * a.elem_size for a in launch.tensors().values())
        report = reports.get((trace.index, launch.index))
        flops = _program_flops(report) * launch.programs if report is not None else 0.0
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
            moved = sum(a.numel * a.elem_size for a in launch.tensors().values())
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


# Updates per address (over one launch) from which atomics through data-dependent addresses
# serialise: a split-K reduction adds a handful per output, a histogram thousands per bin.
CONTENDED_UPDATES_PER_ADDRESS = 64
# Atomics on one address serialise in L2 at roughly one per nanosecond; HBM streams ~4 bytes per
# picosecond. Same-address atomics matter once their serial time is a real share of the launch's.
SECONDS_PER_SERIAL_ATOMIC = 1e-9
HBM_BYTES_PER_SECOND = 4.0e12


def detect_atomics(ctx: TriageContext) -> list[Finding]:
    """nv.atomic-contention: atomics in a hot loop, every program hitting the same address, or
    atomics through data-dependent addresses (histograms, scatter-adds) whose launch issues many
    updates per address of the target: the target's size bounds the distinct addresses."""
    found = Findings()
    for name, report, analysis in _reports(ctx):
        case = analysis.case if analysis else None
        programs = analysis.launch.programs if analysis else None
        for atomic in report.atomics:
            sem = atomic.sem or "acq_rel (default)"
            loops = _runtime_loops(report, atomic.loops)
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
                    streaming = _launch_bytes(analysis) / HBM_BYTES_PER_SECOND
                    if serial < MIN_ACCESS_SHARE * streaming:
                        continue  # a few updates per program against a long stream: no measurable wait
                    detail += f" (about {serial * 1e6:.1f} us serialised against {streaming * 1e6:.1f} us of streaming)"
                found.add(ctx, "nv.atomic-contention", name, atomic.line, "contended atomics",
                          0.8 if programs else 0.6, [source_evidence(ctx, atomic.line, detail)], case, analysis=analysis)
    return found.list()


def _written_params(report: KernelReport) -> set[str]:
    return {a.base for a in report.accesses if a.op in ("store", "atomic") and a.base}


def _read_params(report: KernelReport) -> set[str]:
    return {a.base for a in report.accesses if a.op == "load" and a.base}


# Torch ops that fill, copy or permute data without computing on it: not an epilogue to fuse (the
# catalog's pattern is elementwise or reduction work done in a separate pass). Reading through an
# index (`x[idx]`) is not recorded as compute either, so writing through one is treated alike.
DATA_MOVEMENT = {"zeros", "zeros_like", "zero_", "fill_", "full", "full_like", "contiguous", "clone", "copy_",
                 "__setitem__", "index_put_", "index_copy_", "cat", "stack"}


def _forward_bytes(launches: Iterable[Any]) -> int:
    """Bytes the forward's kernels touch: the sum of their tensor arguments."""
    return sum(arg.numel * arg.elem_size for launch in launches for arg in launch.tensors().values())


def _real_share(size: int, total: int) -> bool:
    """An intermediate worth a finding: a real share of the forward's traffic (a per-row
    statistic, a scalar loss or a routing table beside the real data costs nothing measurable)."""
    return size >= MIN_ACCESS_SHARE * total


def detect_unfused(ctx: TriageContext) -> list[Finding]:
    """nv.unfused-epilogue: elementwise or reduction work done by a separate launch (or torch op)
    over data another kernel of the same forward just wrote to global memory, which the producer
    could have applied before its store: the intermediate makes an HBM round trip.

    The consumer is a Triton kernel without a K loop (a chain of GEMMs is no epilogue) or a torch op
    that computes (copies and fills are not work to fuse); the intermediate is a real share of the
    forward's traffic. That the intermediate is also returned does not matter: fused, the producer
    still writes it once and the consumer's re-read disappears. A torch op that prepares a kernel's
    input the same way could be fused into the kernel's loads."""
    found = Findings()
    reports = {(a.case_index, a.launch.index): a.report for a in ctx.analyses}
    by_kernel = {a.kernel.name: a.report for a in ctx.analyses}
    for trace in ctx.traces:
        written: dict[int, tuple[Any, int]] = {}
        read_by: dict[int, set] = {}
        primaries = [launch for launch in trace.launches if launch.primary]
        total = _forward_bytes(primaries)
        for launch in primaries:
            report = reports.get((trace.index, launch.index)) or by_kernel.get(launch.kernel)
            if report is None:
                continue
            tensors = launch.tensors()
            epilogue_like = not any(_runtime_loops(report, d.loops) for d in report.dots)
            for param in (_read_params(report) if epilogue_like else ()):
                arg = tensors.get(param)
                if arg is None or arg.storage not in written:
                    continue
                producer, size = written[arg.storage]
                if producer.line == launch.line:
                    continue  # one kernel launched in a loop accumulating into its own output
                # Fused, the consumer's re-reads of what the producer already read go too.
                shared = sum(a.numel * a.elem_size for p, a in tensors.items()
                             if p in _read_params(report) and a.storage in read_by.get(id(producer), set()))
                if not _real_share(size + shared, total):
                    continue
                detail = (f"{launch.kernel} reads `{param}` ({size / 2**20:.1f} MiB), which {producer.kernel} wrote "
                          "earlier in the same forward" + (f", and re-reads {shared / 2**20:.1f} MiB of its inputs"
                                                           if shared else "")
                          + ": an HBM round trip the producer could avoid by applying this work before its store")
                found.add(ctx, "nv.unfused-epilogue", launch.kernel, launch.line, "work split across kernels", 0.8,
                          [source_evidence(ctx, launch.line, detail)], trace.case)
            read_by[id(launch)] = {tensors[p].storage for p in _read_params(report) if p in tensors}
            for param in _written_params(report):
                arg = tensors.get(param)
                if arg is not None and arg.storage is not None:
                    written[arg.storage] = (launch, arg.numel * arg.elem_size)
        for op in trace.torch_ops:
            if op.name in DATA_MOVEMENT:
                continue
            after = [(s, w) for s, w in written.items() if s in op.reads and w[0].index < op.index]
            if after:
                _, (producer, size) = after[-1]
                if _real_share(size, total):
                    detail = (f"torch `{op.name}` runs on the output of {producer.kernel} ({size / 2**20:.0f} MiB) after "
                              "the kernel: a separate pass over HBM the kernel's epilogue could do")
                    found.add(ctx, "nv.unfused-epilogue", producer.kernel, op.line, "work split across kernels", 0.75,
                              [source_evidence(ctx, op.line, detail)], trace.case)
            elif op.index < len(trace.launches) and trace.launches[op.index].primary:
                consumer = trace.launches[op.index]
                report = reports.get((trace.index, consumer.index))
                args = consumer.tensors()
                prepared = [args[p] for p in (_read_params(report) if report else set())
                            if p in args and args[p].storage in op.writes]
                size = max((a.numel * a.elem_size for a in prepared), default=0)
                if prepared and _real_share(size, total):
                    detail = (f"torch `{op.name}` prepares the input of {consumer.kernel} ({size / 2**20:.0f} MiB): "
                              "fuse it into the kernel's loads")
                    found.add(ctx, "nv.unfused-epilogue", consumer.kernel, op.line, "work split across kernels", 0.7,
                              [source_evidence(ctx, op.line, detail)], trace.case)
    return found.list()


def detect_redundant_traffic(ctx: TriageContext) -> list[Finding]:
    """nv.redundant-global-traffic: the same addresses loaded by several passes of one program
    when the data would fit on chip (or in three or more passes, where an online algorithm
    needs two), or the same tensor read again by a later kernel of the forward."""
    found = Findings()
    for name, report, analysis in _reports(ctx):
        case = analysis.case if analysis else None
        by_base: dict[str, list] = defaultdict(list)
        for access in report.accesses:
            if access.op == "load" and access.base and access.shape and not access.dot_operand:
                by_base[access.base].append(access)
        for base, loads in by_base.items():
            if len(loads) < 2:
                continue
            passes = [loads[0]]
            for load in loads[1:]:
                if _overlaps(load, passes[0]) and load.loops != passes[0].loops:
                    passes.append(load)
                elif analysis is None and load.loops != passes[0].loops:
                    passes.append(load)
            if len(passes) < 2:
                continue
            extent = max(_program_extent(report, p) for p in passes)
            bytes_extent = extent * passes[0].elem_bits // 8
            fits = bytes_extent <= 64 * 1024
            if len(passes) < 3 and not fits:
                continue
            lines = ", ".join(str(p.line) for p in passes)
            detail = (f"`{base}` is read by {len(passes)} passes (lines {lines}); each program's data is "
                      f"{bytes_extent / 1024:.0f} KiB" + (", which fits on chip" if fits else
                                                          "; an online (single-read) formulation needs fewer passes"))
            found.add(ctx, "nv.redundant-global-traffic", name, passes[1].line, "the same data read more than once",
                      0.8 if analysis else 0.6, [source_evidence(ctx, passes[1].line, detail)], case, analysis=analysis)
    _reread_across_kernels(ctx, found)
    return found.list()


def _reread_across_kernels(ctx: TriageContext, found: Findings) -> None:
    """A tensor read by one kernel and again, unchanged, by a later kernel of the same forward,
    both memory-bound (no dot loop), when the first kernel's share of it per program fits on chip
    (a fused kernel would read it once) and it is a real share of the forward's traffic."""
    reports = {(a.case_index, a.launch.group): a for a in ctx.analyses if a.launch.primary}
    for trace in ctx.traces:
        launches = [(launch, reports.get((trace.index, launch.group))) for launch in trace.launches if launch.primary]
        launches = [(launch, a) for launch, a in launches if a is not None]
        total = sum(arg.numel * arg.elem_size for launch, _ in launches for arg in launch.tensors().values()) or 1
        first_reader: dict[int, tuple] = {}
        for launch, analysis in launches:
            report = analysis.report
            tensors = launch.tensors()
            memory_bound = not any(_runtime_loops(report, d.loops) for d in report.dots)
            for param in _read_params(report):
                arg = tensors.get(param)
                if arg is None or arg.storage is None:
                    continue
                earlier = first_reader.get(arg.storage)
                size = arg.numel * arg.elem_size
                if earlier is None:
                    first_reader[arg.storage] = (launch, analysis, param) if memory_bound else None
                    continue
                if not memory_bound or size < max(1 << 20, MIN_ACCESS_SHARE * total):
                    continue
                first, first_analysis, first_param = earlier
                if first.line == launch.line:
                    continue  # one launch site in a loop: each launch takes its own piece (an offset argument)
                loads = [a for a in first_analysis.report.accesses if a.op == "load" and a.base == first_param]
                per_program = sum(_program_extent(first_analysis.report, a) * a.elem_bits // 8 for a in loads)
                if not loads or per_program > 64 * 1024:
                    continue
                detail = (f"{launch.kernel} reads `{param}` ({size / 2**20:.0f} MiB) again after {first.kernel} read it in "
                          f"the same forward; {first.kernel}'s programs hold {per_program / 1024:.0f} KiB of it each, "
                          "so one fused kernel could read it once")
                found.add(ctx, "nv.redundant-global-traffic", launch.kernel, launch.line,
                          "the same data read more than once", 0.7, [source_evidence(ctx, launch.line, detail)],
                          trace.case)
            for param in _written_params(report):
                arg = tensors.get(param)
                if arg is not None:
                    first_reader.pop(arg.storage, None)  # new data: a later read is no re-read


def _overlaps(a: Any, b: Any) -> bool:
    if a.sample_offsets is None or b.sample_offsets is None:
        return a.info == b.info and a.shape == b.shape
    return bool(np.intersect1d(np.asarray(a.sample_offsets).ravel(), np.asarray(b.sample_offsets).ravel()).size)


def _program_extent(report: KernelReport, access: Any) -> int:
    return access.numel * _trips(report, access.loops)


# ------------------------------------------------------------------------------ configuration

def detect_hardcoded_config(ctx: TriageContext) -> list[Finding]:
    """nv.hardcoded-config: a GEMM-like kernel (tl.dot in a loop) launched with one fixed tile,
    num_warps and num_stages for cases of materially different GEMM shape (a dimension 2x apart),
    no autotune or heuristic choosing, where the fixed config fits at least one case poorly
    (padded tiles, a small tile on a large GEMM, spills, shared memory, one stage, mma.sync).

    GEMM-like only: a memory-bound kernel with a sensible fixed block runs near bandwidth at every
    size, and one whose block is not sensible is reported as what that causes (nv.tiny-block,
    nv.oversized-block, nv.small-grid). A fixed config that fits every case is no finding."""
    from ..fixes.launch import plan

    found = Findings()
    by_kernel: dict[str, list[LaunchAnalysis]] = defaultdict(list)
    for analysis in ctx.analyses:
        by_kernel[analysis.kernel.name].append(analysis)
    for name, analyses in by_kernel.items():
        kernel = analyses[0].kernel
        if kernel.autotune is not None or kernel.heuristics or any(a.launch.autotune for a in analyses):
            continue
        gemms = [a for a in analyses if _looped_dot(a.report) is not None]
        if len({a.case_index for a in gemms}) < 2:
            continue
        # Knobs: tile sizes the source fixes at the launch and whose axis the grid or a loop
        # covers (so another value would also be correct), plus fixed num_warps/num_stages.
        knobs = set()
        bounds = set().union(*(a.report.bounds for a in gemms))
        for site in ctx.source.launches:
            if site.kernel == name:
                knobs |= {p.name for p in plan(ctx.source, site, bounds).params.values() if p.static and p.tiling}
        configs = {(tuple(sorted((k, v) for k, v in a.launch.constexprs.items() if k in knobs)),
                    a.launch.num_warps, a.launch.num_stages) for a in gemms}
        if len(configs) != 1 or not knobs:
            continue
        dims = {a.case_index: _gemm_dims(a) for a in gemms}
        if not _materially_different(list(dims.values())):
            continue
        misfits = []
        for analysis in gemms:
            for why in _config_misfits(ctx, analysis, dims[analysis.case_index]):
                misfits.append((analysis, why))
        misfits += [(gemms[0], why) for why in _compiled_misfits(ctx, name)]
        if not misfits:
            continue
        config, num_warps, num_stages = next(iter(configs))
        shown = ", ".join(f"{k}={v}" for k, v in config)
        shapes = "; ".join(_shape_text(d) for d in dict.fromkeys(dims.values()))
        analysis, why = misfits[0]
        line = gemms[0].launch.line
        detail = (f"every case launches with {shown}, num_warps={num_warps}, num_stages={num_stages} for GEMMs "
                  f"of {shapes}; for {_shape_text(dims[analysis.case_index])}: {why}")
        found.add(ctx, "nv.hardcoded-config", name, line, "one fixed launch configuration for all shapes", 0.75,
                  [source_evidence(ctx, line, detail)])
    return found.list()


def _looped_dot(report: KernelReport) -> Any:
    return next((d for d in report.dots if _runtime_loops(report, d.loops) and len(d.a_shape) >= 2 and d.b_shape),
                None)


def _gemm_dims(analysis: LaunchAnalysis) -> tuple[Optional[int], Optional[int], Optional[int]]:
    """(M, N, K) of one launch: M and N from the tensor the dot's result is stored to, K from the
    K loop's trip count times BLOCK_K; None where the source does not say."""
    report = analysis.report
    dot = _looped_dot(report)
    k = _trips(report, _runtime_loops(report, dot.loops)) * dot.a_shape[-1]
    m = n = None
    store = next((a for a in report.accesses if a.op in ("store", "atomic") and a.from_dot and a.base), None)
    out = analysis.launch.tensors().get(store.base) if store is not None else None
    if out is not None and len(out.shape) >= 2:
        m, n = out.shape[-2], out.shape[-1]
    return m, n, k


# Sizes this far apart count as 2x apart: K comes from trip count x BLOCK_K, so a K of 1500 and
# one of 3000 read as 1536 and 3008 once rounded up to whole tiles.
MATERIAL_RATIO = 1.9


def _materially_different(dims: list[tuple[Optional[int], ...]]) -> bool:
    for axis in range(3):
        sizes = [d[axis] for d in dims if d[axis]]
        if len(sizes) >= 2 and max(sizes) >= MATERIAL_RATIO * min(sizes):
            return True
    return False


def _shape_text(dims: tuple[Optional[int], ...]) -> str:
    return "x".join("?" if d is None else str(d) for d in dims)


def _compiled_misfits(ctx: TriageContext, kernel: str) -> list[str]:
    """What rung-3 facts, when given, show the fixed config doing badly in some compiled case:
    spills, mma.sync, an unpipelined K loop, shared memory limiting residency."""
    reasons = []
    for fact in ctx.facts:
        value = fact.value if isinstance(fact.value, dict) else {}
        if fact.kernel.split("[", 1)[0].split("#", 1)[0] != kernel:
            continue
        if fact.kind == "spill" and (value.get("spill_stores_bytes") or 0) + (value.get("spill_loads_bytes") or 0) >= 64:
            reasons.append("the compiled kernel spills registers")
        elif fact.kind == "dot_lowering" and value.get("kind") == "mma_sync" and not rows_below_wgmma(ctx, kernel):
            reasons.append("the compiled dot uses mma.sync")
        elif fact.kind == "pipelining" and value.get("feeds_dot") and not value.get("pipelined"):
            reasons.append("the compiled K loop is not pipelined")
        elif fact.kind == "occupancy" and value.get("limiter") == "shared_memory" and (value.get("warps_per_sm") or 0) < 8:
            reasons.append("shared memory limits the compiled kernel to few resident warps")
    return list(dict.fromkeys(reasons))


def _config_misfits(ctx: TriageContext, analysis: LaunchAnalysis, dims: tuple) -> list[str]:
    """Why the launch's tile / warps / stages fit this GEMM shape poorly (empty when they fit)."""
    report = analysis.report
    dot = _looped_dot(report)
    block_m, block_n = dot.a_shape[-2], dot.b_shape[-1]
    m, n, _ = dims
    rows = masked_rows(analysis, dot)
    m = rows if rows is not None and (m is None or rows < m) else m
    sm_count = _device(ctx, "sm_count", 132)
    reasons = []
    if m and block_m >= 2 * max(m, 16):
        reasons.append(f"BLOCK_M={block_m} for M={m} pads most of every tile")
    if n and block_n >= 2 * max(n, 16):
        reasons.append(f"BLOCK_N={block_n} for N={n} pads most of every tile")
    if m and n and block_m * block_n < 128 * 128 // 2 and math.ceil(m / 128) * math.ceil(n / 128) >= sm_count:
        reasons.append(f"a {block_m}x{block_n} tile on a {m}x{n} output: 128x128 tiles would still fill every SM "
                       "with twice the reuse per loaded byte")
    programs = analysis.launch.programs
    if programs < sm_count and not _launched_in_loop(ctx, analysis) and \
            (_program_flops(report) * programs >= 1e9 or idle_dot_seconds(report, programs, sm_count) >= IDLE_SECONDS):
        reasons.append(f"{block_m}x{block_n} tiles give {programs} programs for {sm_count} SMs on this shape: "
                       "smaller tiles or split-K would fill the GPU")
    if register_estimate(report).total > 255:
        reasons.append(f"the {block_m}x{block_n} accumulator on {report.num_warps} warps spills")
    limit = shared_memory_limit(ctx, report, analysis.launch.num_stages, analysis.launch.programs)
    if limit is not None:
        reasons.append(limit[0])
    if analysis.launch.num_stages <= 1:
        reasons.append("num_stages=1 leaves the K loop unpipelined")
    if _dot_version(dot, report.num_warps) == 2 and len(dot.a_shape) == 2 and dot.a_bits <= 16 and \
            (report.num_warps % 4 or (block_m % 64 and (m is None or m >= 64))):
        reasons.append(f"BLOCK_M={block_m}, num_warps={report.num_warps} lower to mma.sync instead of wgmma")
    return reasons


def _launched_in_loop(ctx: TriageContext, analysis: LaunchAnalysis) -> bool:
    """The case launches this kernel several times from the launch's line (a launch per expert,
    per sequence): its grid is small because the work is split across launches, which one
    launch over all of it fixes, not another tile."""
    for trace in ctx.traces:
        if trace.index == analysis.case_index:
            return sum(1 for launch in trace.launches if launch.primary and launch.line == analysis.launch.line) > 1
    return False


# ---------------------------------------------------------------------------------- index math

def hot_divmods(report: KernelReport) -> list:
    """Per-element // and % by a divisor that is not a power of two, in a runtime loop or over
    the bulk of the elements (a per-row index vector of a 2-D tile is computed once per program)."""
    bulk = max((a.numel for a in report.accesses), default=0)
    hot = []
    for divmod_ in report.divmods:
        if not divmod_.per_element or is_power_of_two(divmod_.divisor_const):
            continue
        size = math.prod(divmod_.shape) if divmod_.shape else 1
        if _runtime_loops(report, divmod_.loops) or size * 4 >= bulk:
            hot.append(divmod_)
    return hot


def worth_vectorising(report: KernelReport, access: Any) -> bool:
    """Could a wider form of this access speed the kernel up? It carries a real share of the
    program's bytes, and its real addresses are contiguous along the threads (or it is one of an
    interleaved set); unknown addresses (through loaded indices) get the benefit of the doubt."""
    total = sum(access_bytes(report, a) for a in report.accesses) or 1
    group = interleaved_groups(report).get(access.node_id)
    moved = sum(access_bytes(report, a) for a in group) if group else access_bytes(report, access)
    if moved < MIN_ACCESS_SHARE * total:
        return False
    if group or (access.true_strides is None and access.true_vec is None):
        return True
    return fastest_stride(access) == 1 or (access.true_vec or 1) > 1


def index_int64_ops(report: KernelReport) -> list:
    """Per-element 64-bit integer ops that reach a pointer offset: index math. A 64-bit value
    that is data (an int64 id compared, an argmin cast for an int64 output) is no index cost."""
    return [op for op in report.int64_ops if op.per_element and op.feeds_address]


def detect_index_math(ctx: TriageContext) -> list[Finding]:
    """nv.index-div-mod (per-element // and % by a value the compiler cannot strength-reduce,
    on the bulk of the elements or in a loop) and nv.int64-index (64-bit per-element index math where 32 bits provably suffice, or 32-bit
    offsets into tensors past 2**31 elements)."""
    found = Findings()
    for name, report, analysis in _reports(ctx):
        case = analysis.case if analysis else None
        for divmod_ in hot_divmods(report):
            what = "a runtime value" if divmod_.divisor_const is None else f"{divmod_.divisor_const} (not a power of two)"
            detail = f"per-element `{divmod_.op}` by {what}: tens of instructions per element in the index math"
            found.add(ctx, "nv.index-div-mod", name, divmod_.line, "integer division in per-element index math", 0.7,
                      [source_evidence(ctx, divmod_.line, detail)], case, analysis=analysis)
        largest = max((a.numel for a in analysis.launch.tensors().values()), default=0) if analysis else None
        per_element = index_int64_ops(report)
        if per_element and (largest is None or largest < 2 ** 31):
            op = per_element[0]
            explicit = any("int64" in o.text for o in report.int64_ops)
            detail = (f"64-bit per-element index arithmetic (`{op.text}`)"
                      + (f" while the largest tensor has {largest} elements (< 2**31)" if largest is not None else ""))
            found.add(ctx, "nv.int64-index", name, op.line, "64-bit index math where 32 bits suffice",
                      0.65 if explicit else 0.45, [source_evidence(ctx, op.line, detail)], case, analysis=analysis)
        if analysis is not None and largest is not None and largest >= 2 ** 31 and not report.int64_ops:
            access = next((a for a in report.accesses if a.shape), None)
            line = access.line if access else analysis.kernel.line
            detail = f"a tensor of {largest} elements is addressed with 32-bit offsets: they overflow past 2**31"
            found.add(ctx, "nv.int64-index", name, line, "32-bit offsets overflow", 0.8,
                      [source_evidence(ctx, line, detail)], case, analysis=analysis)
    return found.list()
