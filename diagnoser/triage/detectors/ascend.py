"""Source-level detectors for Ascend NPUs (Triton-Ascend), from its performance guide's rules:
grid = physical cores, 192 KB unified buffer halved by multibuffering, 32/512-byte tail
alignment, no vector int64 add / int compare, scalarised discrete access, fill before masked
copies, and no copy/compute overlap without a tiling loop."""
from __future__ import annotations

import math
from typing import Any, Optional

from ladder.diagnoser.evidence import Finding

from ..context import TriageContext
from .common import Findings, source_evidence
from .source.measures import MIN_ACCESS_SHARE, access_bytes, reports, runtime_loops


def _device(ctx: TriageContext, key: str, default: Any) -> Any:
    return ctx.device.get(key, default)


def detect_npu_grid(ctx: TriageContext) -> list[Finding]:
    """npu.grid-exceeds-cores: grids past the 65535 coreDim limit or far beyond the core count
    whose programs do not share out the work in a grid-stride loop. A loop inside each program
    over its own block (columns of a row, a list of sequences) does not help: the programs still
    run in rounds of the core count."""
    found = Findings()
    limit = _device(ctx, "max_grid", 65535)
    for analysis in ctx.analyses:
        programs = analysis.launch.programs
        report = analysis.report
        cores = _device(ctx, "aicore_count" if report.dots else "vectorcore_count", 40 if not report.dots else 20)
        line = analysis.launch.line
        if programs > limit:
            detail = f"{programs} programs exceed the coreDim limit of {limit}: the launch is rejected"
            found.add(ctx, "npu.grid-exceeds-cores", analysis.kernel.name, line, "grid larger than the NPU's cores",
                      0.95, [source_evidence(ctx, line, detail)], analysis=analysis)
        elif programs > 4 * cores and not any(loop.grid_stride for loop in report.loops.values()):
            detail = (f"{programs} programs for {cores} cores, each doing its own block: programs are scheduled in "
                      f"{math.ceil(programs / cores)} rounds")
            found.add(ctx, "npu.grid-exceeds-cores", analysis.kernel.name, line, "grid larger than the NPU's cores",
                      0.75, [source_evidence(ctx, line, detail)], analysis=analysis)
    return found.list()


def _on_chip_bytes(report: Any) -> int:
    return sum(math.prod(t.shape) * max(t.bits // 8, 1) for t in report.tiles)


def detect_npu_ub(ctx: TriageContext) -> list[Finding]:
    """npu.ub-overflow: tiles live at once beyond the unified buffer (halved by multibuffering)."""
    found = Findings()
    ub = _device(ctx, "unified_buffer_bytes", 196608)
    factor = _device(ctx, "multibuffer_factor", 2)
    for name, report, analysis in reports(ctx):
        need = _on_chip_bytes(report) * factor
        if need > ub and report.tiles:
            tile = max(report.tiles, key=lambda t: math.prod(t.shape))
            detail = (f"blocks live in one program need about {need // 1024} KiB with multibuffering "
                      f"(x{factor}); the unified buffer holds {ub // 1024} KiB")
            found.add(ctx, "npu.ub-overflow", name, tile.line, "working set exceeds the unified buffer", 0.75,
                      [source_evidence(ctx, tile.line, detail)], analysis=analysis)
    return found.list()


def detect_npu_alignment(ctx: TriageContext) -> list[Finding]:
    """npu.unaligned-tail-axis: a block whose last axis is not 32-byte (vector) or 512-byte
    (cube) aligned gets padded; so does a contiguous block whose rows lie a distance apart in
    memory that is not 32-byte aligned (a [T, 60] fp32 tile padded to a 64-wide block still
    copies 240-byte rows)."""
    found = Findings()
    for name, report, analysis in reports(ctx):
        vector_need = _device(ctx, "vector_tail_alignment_bytes", 32)
        need = _device(ctx, "cube_tail_alignment_bytes", 512) if report.dots else vector_need
        for access in report.accesses:
            if len(access.shape) < 2:
                continue
            size = max(access.elem_bits // 8, 1)
            tail = access.shape[-1] * size
            strides = access.true_strides or ()
            row = strides[-2] * size if len(strides) >= 2 and strides[-1] == 1 and strides[-2] else None
            if tail % need:
                detail = f"block {list(access.shape)}: tail axis of {tail} bytes is padded to a multiple of {need}"
            elif row is not None and row % vector_need:
                detail = (f"block {list(access.shape)}: its rows lie {row} bytes apart in memory (not a multiple of "
                          f"{vector_need}), so every row copied starts unaligned and gets padded")
            else:
                continue
            found.add(ctx, "npu.unaligned-tail-axis", name, access.line, "tail axis not aligned", 0.75,
                      [source_evidence(ctx, access.line, detail)], analysis=analysis)
    return found.list()


def detect_npu_int64(ctx: TriageContext) -> list[Finding]:
    """npu.int64-scalar-fallback: vector int64 arithmetic or compares, which A2/A3 vector units lack,
    on int64 data (loaded ids, labels, values derived from them).

    int64 math on program ids and tl.arange alone is not counted: offsets affine in them are
    folded into the pointer by the structured-pointer analysis, and masks over them into the
    copy's bounds. Nor is a cast to int64 (widening an int32 result for an int64 store): the
    guide names the vector add and compare, not the conversion."""
    found = Findings()
    for name, report, analysis in reports(ctx):
        for op in report.int64_ops:
            if op.per_element and op.on_data and op.kind != "cast":
                detail = f"int64 vector arithmetic (`{op.text}`) is expanded to scalar code on the vector unit"
                found.add(ctx, "npu.int64-scalar-fallback", name, op.line, "int64 arithmetic falls back to scalar",
                          0.75, [source_evidence(ctx, op.line, detail)], analysis=analysis)
    return found.list()


def discrete_reason(report: Any, access: Any) -> Optional[str]:
    """Why TritonToUnstructure lowers this access to a scalar loop, or None: addresses through
    loaded values, a negative step along an axis, or per-element // and % in the offsets. A
    positive constant stride stays a structured (strided) copy."""
    if not access.shape or access.block_ptr:
        return None
    strides = access.true_strides or ()
    if "load" in access.deps:
        return "its addresses come from loaded values (an indirect gather)"
    negative = [s for s in strides if s is not None and s < 0]
    if negative:
        return f"an axis steps {negative[0]} elements (a negative stride)"
    if any(d.per_element and d.line <= access.line for d in report.divmods):
        return "its offsets go through per-element // or %"
    return None


def detect_npu_discrete(ctx: TriageContext) -> list[Finding]:
    """npu.discrete-access: gathers through loaded indices, strided last axes and non-affine
    (// and %) address math become scalar loops (TritonToUnstructure)."""
    found = Findings()
    for name, report, analysis in reports(ctx):
        case = analysis.case if analysis else None
        for access in report.accesses:
            why = discrete_reason(report, access)
            if why is None:
                continue
            detail = f"{access.op} of {access.base or 'a tensor'}: {why}; it lowers to a scalar loop"
            found.add(ctx, "npu.discrete-access", name, access.line, "discrete access lowered to scalar loops", 0.7,
                      [source_evidence(ctx, access.line, detail)], case)
    return found.list()


def detect_npu_masked_fill(ctx: TriageContext) -> list[Finding]:
    """npu.masked-load-fill: a masked load is a vector fill of the whole buffer, then the copy.

    Not for a load carrying a negligible share of the program's bytes (a handful of ids, a
    per-row scalar): its fill costs nothing measurable."""
    found = Findings()
    for name, report, analysis in reports(ctx):
        total = sum(access_bytes(report, a) for a in report.accesses) or 1
        for access in report.accesses:
            if access.op == "load" and access.masked and access.care_padding is not False \
                    and access_bytes(report, access) >= MIN_ACCESS_SHARE * total:
                detail = ("masked tl.load: the buffer is first filled with `other` on the vector unit, then MTE2 "
                          "copies into it (care_padding=False removes the fill when padding is unused)")
                found.add(ctx, "npu.masked-load-fill", name, access.line, "masked load fills before copying", 0.7,
                          [source_evidence(ctx, access.line, detail)], analysis=analysis)
    return found.list()


def detect_npu_where(ctx: TriageContext) -> list[Finding]:
    """npu.where-condition-dtype: tl.where on an integer comparison (int32/int64 compare has no
    vector instruction on A2/A3)."""
    found = Findings()
    for name, report, analysis in reports(ctx):
        for where in report.wheres:
            if where.cond_from_int_compare and where.shape:
                detail = "tl.where condition is an integer comparison: compare in fp32 to keep it vectorised"
                found.add(ctx, "npu.where-condition-dtype", name, where.line, "integer where-condition", 0.7,
                          [source_evidence(ctx, where.line, detail)], analysis=analysis)
    return found.list()


def detect_npu_single_pass(ctx: TriageContext) -> list[Finding]:
    """npu.no-multibuffer-overlap: one untiled pass per program (load, compute, store once)
    leaves nothing for double buffering to overlap."""
    found = Findings()
    for name, report, analysis in reports(ctx):
        loads = [a for a in report.accesses if a.op == "load" and a.shape]
        if not loads or any(runtime_loops(report, a.loops) for a in loads):
            continue
        biggest = max(loads, key=lambda a: a.numel)
        size = sum(a.numel * max(a.elem_bits // 8, 1) for a in loads)
        if size < 4096:
            continue
        detail = (f"each program loads {size // 1024} KiB in a single pass with no loop: copy-in, compute and "
                  "copy-out cannot overlap")
        found.add(ctx, "npu.no-multibuffer-overlap", name, biggest.line, "single pass without multibuffer overlap",
                  0.65, [source_evidence(ctx, biggest.line, detail)], analysis=analysis)
    return found.list()
