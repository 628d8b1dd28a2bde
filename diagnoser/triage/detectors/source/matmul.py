"""Matrix products (source level, NVIDIA): whether a product reaches the tensor cores, and with
which instruction (nv.no-tensor-core, nv.mma-v2-on-hopper); the order a tiled GEMM's programs walk
their output tiles (nv.gemm-no-grouped-order); and one fixed launch configuration for GEMM shapes
it fits poorly (nv.hardcoded-config).
"""
from __future__ import annotations

import math
from collections import defaultdict
from typing import Any, Optional

from ladder.diagnoser.evidence import Finding

from ...context import LaunchAnalysis, TriageContext
from ...interp.report import KernelReport
from ..common import Findings, source_evidence
from .measures import (IDLE_SECONDS, device, dot_version, idle_dot_seconds, program_flops, register_estimate,
                       reports, runtime_loops, trips)
from .tiles import shared_memory_limit


# ----------------------------------------------------------------------------------- dot lowering

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
    for name, report, analysis in reports(ctx):
        case = analysis.case if analysis else None
        num_warps = report.num_warps
        for dot in report.dots:
            if len(dot.a_shape) < 2 or not dot.b_shape:
                continue  # a block size the walk could not resolve (a script's launch walked without its arguments)
            version = dot_version(dot, num_warps)
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
                    programs // MMA_MIN_ROWS >= device(ctx, "sm_count") // 2:
                detail = (f"tl.sum over axis {reduction.axis} of a {list(reduction.in_shape)} matrix, the same for all "
                          f"{programs} programs, times each program's own vector: together a matrix product done as "
                          f"GEMVs on CUDA cores; {MMA_MIN_ROWS} or more vectors per program make it a tl.dot")
                found.add(ctx, "nv.no-tensor-core", name, reduction.line, "matrix product on CUDA cores", 0.75,
                          [source_evidence(ctx, reduction.line, detail)], case, analysis=analysis)
        if not report.dots:
            for outer in report.outer_products:
                if runtime_loops(report, outer.loops) and len(outer.shape) == 2 and min(outer.shape) >= 16:
                    detail = (f"rank-1 updates {list(outer.shape)} accumulated in a loop: a matmul on CUDA cores "
                              "(one K step per iteration)")
                    found.add(ctx, "nv.no-tensor-core", name, outer.line, "matrix product on CUDA cores", 0.8,
                              [source_evidence(ctx, outer.line, detail)], case, analysis=analysis)
    return found.list()


# The fewest rows a tensor-core dot takes (mma.sync m16): programs that each multiply one vector
# by a shared matrix must be grouped this many to a program.
MMA_MIN_ROWS = 16


# ------------------------------------------------------------------------------------- tile order

def detect_grouped_order(ctx: TriageContext) -> list[Finding]:
    """nv.gemm-no-grouped-order: a tiled GEMM whose programs walk output tiles row by row, on
    more programs than SMs, with at least 4 tiles each way, where the operand each wave walks
    again does not fit in half the L2 (the other operand streams through it too, and an H100/H200
    L2 is two partitions); when it fits, grouping saves no HBM traffic."""
    found = Findings()
    sm_count = device(ctx, "sm_count")
    for name, report, analysis in reports(ctx):
        looped_dots = [d for d in report.dots if runtime_loops(report, d.loops)]
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
            l2 = device(ctx, "l2_bytes")
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



def _restreamed_operand(analysis: LaunchAnalysis, dot: Any) -> Optional[tuple[str, int]]:
    """("A" or "B", its bytes): the operand a plain program order walks again in every wave.
    Programs along the fastest grid axis share the other operand's tile; with N fastest (the
    usual pid_m = pid // num_pid_n, or program_id(0) indexing N) all of B (K x N) is streamed once
    per row of tiles, with M fastest all of A. None where the GEMM's size is unknown."""
    m, n, k = gemm_dims(analysis)
    if not (m and n and k):
        return None
    a_loads = [a for a in analysis.report.accesses if a.node_id in dot.a_origins]
    m_fastest = analysis.launch.grid[1] > 1 and any("pid0" in a.deps for a in a_loads)
    if m_fastest:
        return "A", m * k * dot.a_bits // 8
    return "B", k * n * dot.b_bits // 8


# ---------------------------------------------------------------------------------- configuration

def detect_hardcoded_config(ctx: TriageContext) -> list[Finding]:
    """nv.hardcoded-config: a GEMM-like kernel (tl.dot in a loop) launched with one fixed tile,
    num_warps and num_stages for cases of materially different GEMM shape (a dimension 2x apart),
    no autotune or heuristic choosing, where the fixed config fits at least one case poorly
    (padded tiles, a small tile on a large GEMM, spills, shared memory, one stage, mma.sync).

    GEMM-like only: a memory-bound kernel with a sensible fixed block runs near bandwidth at every
    size, and one whose block is not sensible is reported as what that causes (nv.tiny-block,
    nv.oversized-block, nv.small-grid). A fixed config that fits every case is no finding."""
    from ...fixes.launch import plan

    found = Findings()
    by_kernel: dict[str, list[LaunchAnalysis]] = defaultdict(list)
    for analysis in ctx.analyses:
        by_kernel[analysis.kernel.name].append(analysis)
    for name, analyses in by_kernel.items():
        kernel = analyses[0].kernel
        if kernel.autotune is not None or kernel.heuristics or any(a.launch.autotune for a in analyses):
            continue
        gemms = [a for a in analyses if looped_dot(a.report) is not None]
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
        dims = {a.case_index: gemm_dims(a) for a in gemms}
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


def looped_dot(report: KernelReport) -> Any:
    return next((d for d in report.dots if runtime_loops(report, d.loops) and len(d.a_shape) >= 2 and d.b_shape),
                None)


def gemm_dims(analysis: LaunchAnalysis) -> tuple[Optional[int], Optional[int], Optional[int]]:
    """(M, N, K) of one launch: M and N from the tensor the dot's result is stored to, K from the
    K loop's trip count times BLOCK_K; None where the source does not say."""
    report = analysis.report
    dot = looped_dot(report)
    k = trips(report, runtime_loops(report, dot.loops)) * dot.a_shape[-1]
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
    dot = looped_dot(report)
    block_m, block_n = dot.a_shape[-2], dot.b_shape[-1]
    m, n, _ = dims
    rows = masked_rows(analysis, dot)
    m = rows if rows is not None and (m is None or rows < m) else m
    sm_count = device(ctx, "sm_count")
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
            (program_flops(report) * programs >= 1e9 or idle_dot_seconds(report, programs, sm_count) >= IDLE_SECONDS):
        reasons.append(f"{block_m}x{block_n} tiles give {programs} programs for {sm_count} SMs on this shape: "
                       "smaller tiles or split-K would fill the GPU")
    if register_estimate(report).total > 255:
        reasons.append(f"the {block_m}x{block_n} accumulator on {report.num_warps} warps spills")
    limit = shared_memory_limit(ctx, report, analysis.launch.num_stages, analysis.launch.programs)
    if limit is not None:
        reasons.append(limit[0])
    if analysis.launch.num_stages <= 1:
        reasons.append("num_stages=1 leaves the K loop unpipelined")
    if dot_version(dot, report.num_warps) == 2 and len(dot.a_shape) == 2 and dot.a_bits <= 16 and \
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
