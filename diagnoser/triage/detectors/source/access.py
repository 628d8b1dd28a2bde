"""Memory access (source level, NVIDIA): how wide and how coalesced each global load and store is
(nv.scalar-access, nv.strided-inner-axis), and what the index math that addresses it costs per
element (nv.index-div-mod, nv.int64-index).

Width is judged by comparing what the compiler will be able to prove about an access (the AxisInfo +
Coalesce mirror) with what the case's real addresses allow. The IR rung sees the instructions the
compiler actually emitted and asks the helpers here whether an access had anything to gain.
"""
from __future__ import annotations

import math
from collections import defaultdict
from typing import Any, Optional

from ladder.diagnoser.evidence import Finding

from ...context import LaunchAnalysis, TriageContext
from ...interp.report import KernelReport
from ..common import Findings, case_label, is_power_of_two, source_evidence
from .measures import (MIN_ACCESS_SHARE, THREADS_PER_WARP, access_bytes, fastest_stride, interleaved_groups,
                       reports, runtime_loops)


# ----------------------------------------------------------------------------------- vector width

# A launch that moves less than this finishes within HBM latency plus launch overhead (1 MiB is
# a quarter of a microsecond of bandwidth): the width of its accesses does not change its time.
LATENCY_BOUND_BYTES = 1 << 20


def latency_bound(ctx: TriageContext, kernel: str) -> bool:
    """Every analysed launch of the kernel moves under LATENCY_BOUND_BYTES (a final reduction of
    a few hundred partials, a scalar fix-up)."""
    launches = [a for a in ctx.analyses if a.kernel.name == kernel]
    return bool(launches) and all(a.launch.operand_bytes() < LATENCY_BOUND_BYTES for a in launches)


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
    for name, report, analysis in reports(ctx):
        if analysis is None:
            continue  # alignment depends on the arguments: only judged with real cases
        if analysis.launch.operand_bytes() < LATENCY_BOUND_BYTES:
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


def _unmasked_width(access: Any) -> int:
    from ... import axisinfo

    return axisinfo.access_width(access.info, access.shape, access.elem_bits, 4).per_thread


# ------------------------------------------------------------------------------------- index math

def hot_divmods(report: KernelReport) -> list:
    """Per-element // and % by a divisor that is not a power of two, in a runtime loop or over
    the bulk of the elements (a per-row index vector of a 2-D tile is computed once per program)."""
    bulk = max((a.numel for a in report.accesses), default=0)
    hot = []
    for divmod_ in report.divmods:
        if not divmod_.per_element or is_power_of_two(divmod_.divisor_const):
            continue
        size = math.prod(divmod_.shape) if divmod_.shape else 1
        if runtime_loops(report, divmod_.loops) or size * 4 >= bulk:
            hot.append(divmod_)
    return hot


# The title of the nv.int64-index finding about 64-bit math where 32 bits suffice (the other one is
# about 32-bit offsets that overflow): the IR vetoes only this one (diagnoser.triage.vetoes).
INT64_WASTE = "64-bit index math where 32 bits suffice"


def index_int64_ops(report: KernelReport) -> list:
    """Per-element 64-bit integer ops that reach a pointer offset: index math. A 64-bit value
    that is data (an int64 id compared, an argmin cast for an int64 output) is no index cost."""
    return [op for op in report.int64_ops if op.per_element and op.feeds_address]


def detect_index_math(ctx: TriageContext) -> list[Finding]:
    """nv.index-div-mod (per-element // and % by a value the compiler cannot strength-reduce,
    on the bulk of the elements or in a loop) and nv.int64-index (64-bit per-element index math where 32 bits provably suffice, or 32-bit
    offsets into tensors past 2**31 elements)."""
    found = Findings()
    for name, report, analysis in reports(ctx):
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
            found.add(ctx, "nv.int64-index", name, op.line, INT64_WASTE,
                      0.65 if explicit else 0.45, [source_evidence(ctx, op.line, detail)], case, analysis=analysis)
        if analysis is not None and largest is not None and largest >= 2 ** 31 and not report.int64_ops:
            access = next((a for a in report.accesses if a.shape), None)
            line = access.line if access else analysis.kernel.line
            detail = f"a tensor of {largest} elements is addressed with 32-bit offsets: they overflow past 2**31"
            found.add(ctx, "nv.int64-index", name, line, "32-bit offsets overflow", 0.8,
                      [source_evidence(ctx, line, detail)], case, analysis=analysis)
    return found.list()
