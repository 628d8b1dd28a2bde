"""Launch-configuration rewrites: bigger blocks for nv.tiny-block, wgmma-friendly tiles for
nv.mma-v2-on-hopper, and software pipelining back on for nv.unpipelined-loop.

Each changes only values the source fixes (literals at the launch site, or the local constants
they come from, and the matching literals in the grid), and only tile sizes whose axis the grid or
a kernel loop covers, so the kernel computes the same result with the new sizes.
"""
from __future__ import annotations

import ast
from typing import Optional

from ladder.diagnoser.evidence import Finding
from ladder.runner import hardware

from ..context import TriageContext
from .common import context_for, reports_of, target_kernels
from .edit import Edit, NotApplicable, apply, replace, span
from .launch import LaunchPlan, plan, sites_for



def _set_param(source: str, launch_plan: LaunchPlan, name: str, value: int) -> list[Edit]:
    param = launch_plan.params[name]
    edits = [replace(source, node, str(value)) for node in param.sources]
    edits += [replace(source, node, str(value)) for node in param.grid_refs if isinstance(node, ast.Constant)]
    return edits


def _set_option(source: str, launch_plan: LaunchPlan, name: str, value: int) -> list[Edit]:
    node = launch_plan.options.get(name)
    if node is not None:
        if not isinstance(node, ast.Constant):
            raise NotApplicable(f"{name} is computed at the launch site; change it there")
        return [replace(source, node, str(value))]
    call = launch_plan.site.node
    end = span(source, call)[1] - 1          # the closing parenthesis
    head = end
    while head > 0 and source[head - 1] in " \t\n":
        head -= 1
    comma = "" if source[head - 1] in ",(" else ", "
    if source[head - 1] == ",":
        comma = " "
    return [Edit(head, head, f"{comma}{name}={value}")]


def _next_pow2(value: int) -> int:
    return 1 << max(int(value) - 1, 0).bit_length()


def _plans(ctx: TriageContext, kernel: str) -> list[LaunchPlan]:
    bounds = set().union(*(r.bounds for r in reports_of(ctx, kernel))) if reports_of(ctx, kernel) else set()
    return [plan(ctx.source, site, bounds) for site in sites_for(ctx.source, kernel)]


def _dot_roles(ctx: TriageContext, kernel: str, launch_plan: LaunchPlan) -> tuple[list[str], list[str], object]:
    reports = reports_of(ctx, kernel)
    dots = [d for r in reports for d in r.dots]
    if not dots:
        raise NotApplicable(f"{kernel} has no tl.dot")
    dot = dots[0]
    if len(dot.a_shape) != 2:
        raise NotApplicable(f"{kernel}: a batched (3-D) tl.dot always lowers to mma.sync; move the batch to the grid")
    static = {n for n, p in launch_plan.params.items() if p.static and p.tiling}
    return sorted(static & dot.m_params), sorted(static & dot.n_params), dot


def fix_mma_v2(source: str, finding: Optional[Finding], ctx: Optional[TriageContext]) -> str:
    """BLOCK_M to a multiple of 64, BLOCK_N to a multiple of 16, num_warps to a multiple of 4."""
    ctx = context_for(source, ctx)
    edits: list[Edit] = []
    for kernel in target_kernels(ctx, finding, "nv.mma-v2-on-hopper"):
        for launch_plan in _plans(ctx, kernel.name):
            m, n_, dot = _dot_roles(ctx, kernel.name, launch_plan)
            changed = False
            for name in m:
                value = launch_plan.params[name].value
                if value % 64:
                    edits += _set_param(source, launch_plan, name, max(64, _next_pow2(value)))
                    changed = True
            for name in n_:
                value = launch_plan.params[name].value
                if value % 16:
                    edits += _set_param(source, launch_plan, name, max(16, _next_pow2(value)))
                    changed = True
            warps = launch_plan.options.get("num_warps")
            if isinstance(warps, ast.Constant) and warps.value % 4:
                edits += _set_option(source, launch_plan, "num_warps", 4)
                changed = True
            if not changed and (dot.a_shape[0] % 64 or dot.b_shape[-1] % 16):
                raise NotApplicable(f"{kernel.name}: the dot's tile sizes are not fixed at the launch site")
    if not edits:
        raise NotApplicable("nv.mma-v2-on-hopper: tiles and warps already meet the wgmma conditions")
    return apply(source, edits)


def fix_tiny_block(source: str, finding: Optional[Finding], ctx: Optional[TriageContext]) -> str:
    """Grow the block that the grid tiles so each thread moves at least a 16-byte vector (at
    least 1024 elements per program for 4 warps); GEMM tiles grow to 64 x 64."""
    ctx = context_for(source, ctx)
    edits: list[Edit] = []
    for kernel in target_kernels(ctx, finding, "nv.tiny-block"):
        reports = reports_of(ctx, kernel.name)
        has_dot = any(r.dots for r in reports)
        for launch_plan in _plans(ctx, kernel.name):
            tiling = [n for n, p in launch_plan.params.items() if p.static and p.tiling]
            if not tiling:
                raise NotApplicable(f"{kernel.name}: its block covers a whole row, not a tiled axis; "
                                    "process several rows per program instead")
            if has_dot:
                m, n_, _ = _dot_roles(ctx, kernel.name, launch_plan)
                for name in m + n_:
                    if launch_plan.params[name].value < 64:
                        edits += _set_param(source, launch_plan, name, 64)
                continue
            warps = launch_plan.options.get("num_warps")
            num_warps = warps.value if isinstance(warps, ast.Constant) else 4
            bits = min((a.elem_bits for r in reports for a in r.accesses if a.shape), default=32)
            target = 32 * num_warps * max(128 // bits, 1) * 2
            total = 1
            for name in tiling:
                total *= launch_plan.params[name].value
            if total >= target:
                continue
            grow = _next_pow2(-(-target // total))
            name = tiling[0]
            edits += _set_param(source, launch_plan, name, launch_plan.params[name].value * grow)
    if not edits:
        raise NotApplicable("nv.tiny-block: blocks are already large enough")
    return apply(source, edits)


def fix_unpipelined(source: str, finding: Optional[Finding], ctx: Optional[TriageContext]) -> str:
    """num_stages back to 3 (2 if three stages of operand tiles would not fit in shared memory),
    at the launch and on `tl.range(..., num_stages=...)` loops feeding a dot."""
    ctx = context_for(source, ctx)
    edits: list[Edit] = []
    for kernel in target_kernels(ctx, finding, "nv.unpipelined-loop"):
        reports = reports_of(ctx, kernel.name)
        tile_bytes = max((sum(a.numel * a.elem_bits // 8 for a in r.accesses if a.dot_operand and a.loops)
                          for r in reports), default=0)
        stages = 3 if 3 * tile_bytes <= hardware.for_target("cuda")["shared_memory_per_block"] else 2
        for launch_plan in _plans(ctx, kernel.name):
            node = launch_plan.options.get("num_stages")
            if isinstance(node, ast.Constant) and isinstance(node.value, int) and node.value <= 1:
                edits.append(replace(source, node, str(stages)))
        for loop in ast.walk(kernel.node):
            if isinstance(loop, ast.For) and isinstance(loop.iter, ast.Call):
                for keyword in loop.iter.keywords:
                    if keyword.arg == "num_stages" and isinstance(keyword.value, ast.Constant) \
                            and keyword.value.value <= 1 and _feeds_dot(loop):
                        edits.append(replace(source, keyword.value, str(stages)))
    if not edits:
        raise NotApplicable("nv.unpipelined-loop: num_stages is not set below 2 here; the loop is unpipelined "
                            "for another reason (narrow loads: see nv.scalar-access)")
    return apply(source, edits)


def _feeds_dot(loop: ast.For) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "dot"
               for n in ast.walk(loop))
