"""nv.hardcoded-config -> a real `@triton.autotune` space keyed on the sizes that vary.

The tile sizes a launch fixes are freed only where changing them keeps the kernel correct (the
grid or a loop in the kernel covers the axis they tile); they move into the configs, the grid
becomes a function of the chosen config, and the fixed `num_warps`/`num_stages` go too. Outputs
written with atomics are zeroed before each trial, buffers updated in place are restored.
"""
from __future__ import annotations

import itertools
import math
from typing import Any, Optional

from ladder.diagnoser.evidence import Finding

from ..context import TriageContext
from ..interp.report import KernelReport
from .common import analyses_of, context_for, reports_of, target_kernels
from .edit import Edit, NotApplicable, apply, indentation, insert_before_line, remove_statement, span
from .launch import LaunchPlan, keyword_span, plan, render, sites_for

# (BLOCK_M, BLOCK_N, BLOCK_K, num_stages, num_warps) for 16-bit operands on Hopper (wgmma
# friendly: M a multiple of 64, 4 or 8 warps); 32-bit operands halve BLOCK_K.
GEMM_SPACE = ((128, 256, 64, 3, 8), (256, 128, 64, 3, 8), (128, 128, 64, 4, 8), (128, 128, 32, 4, 4),
              (128, 64, 64, 4, 4), (64, 128, 64, 4, 4), (64, 64, 64, 4, 4), (128, 32, 64, 4, 4))
BLOCK_SPACE = (512, 1024, 2048, 4096)
WARP_SPACE = (4, 8)
# Elements in one program's largest tile: beyond it the tile spills out of the registers, and
# ptxas takes minutes on it (a 128 x 4096 fp32 tile did not compile in 300 s).
TILE_ELEMENTS_CAP = 16384


def fix_hardcoded_config(source: str, finding: Optional[Finding], ctx: Optional[TriageContext]) -> str:
    ctx = context_for(source, ctx)
    edits: list[Edit] = []
    done = []
    for kernel in target_kernels(ctx, finding, "nv.hardcoded-config"):
        if kernel.autotune is not None:
            continue
        sites = sites_for(ctx.source, kernel.name)
        reports = reports_of(ctx, kernel.name)
        bounds = set().union(*(r.bounds for r in reports)) if reports else set()
        plans = [plan(ctx.source, site, bounds) for site in sites]
        if not reports:
            raise NotApplicable(f"{kernel.name}: kernel could not be analysed")
        tunable = _tunable(plans)
        configs = _space(kernel.name, plans[0], tunable, reports)
        if len(configs) < 2:
            continue
        key = _key(ctx, kernel, reports)
        if not key:
            raise NotApplicable(f"{kernel.name}: no size argument to key the autotuner on")
        edits.append(_decorator(source, kernel, configs, key, reports))
        for launch_plan in plans:
            edits.extend(_launch_edits(source, launch_plan, tunable, plans))
        done.append(kernel.name)
    if not done:
        raise NotApplicable("nv.hardcoded-config: nothing to tune (already autotuned, or no fixed sizes to free)")
    return apply(source, edits)


def _tunable(plans: list[LaunchPlan]) -> list[str]:
    """Tile params that every launch fixes statically and that tile a covered axis."""
    names = None
    for launch_plan in plans:
        ok = {n for n, p in launch_plan.params.items() if p.static and p.tiling}
        names = ok if names is None else names & ok
    return sorted(names or [])


def _space(kernel: str, launch_plan: LaunchPlan, tunable: list[str], reports: list[KernelReport]) -> list[dict[str, Any]]:
    """Configs: a known-good space for GEMM tiles, a scaled neighbourhood for other tiles, and
    the launch's own configuration first so the tuned kernel is never worse."""
    report = reports[0]
    current = {n: launch_plan.params[n].value for n in tunable}
    warps = _static_option(launch_plan, "num_warps", 4)
    stages = _static_option(launch_plan, "num_stages", 3)
    configs = [{"kwargs": dict(current), "num_warps": warps, "num_stages": stages}]
    looped = [d for d in report.dots if d.loops]
    if looped:
        dot = looped[0]
        m = sorted(n for n in tunable if n in dot.m_params)
        n_ = sorted(n for n in tunable if n in dot.n_params)
        k = sorted(n for n in tunable if n in dot.k_params)
        if len(m) == 1 and len(n_) == 1 and len(k) <= 1:
            scale = 2 if dot.a_bits >= 32 else 1
            for bm, bn, bk, s, w in GEMM_SPACE:
                kwargs = {m[0]: bm, n_[0]: bn}
                if k:
                    kwargs[k[0]] = bk // scale
                configs.append({"kwargs": kwargs, "num_warps": w, "num_stages": s})
            return _unique(configs)
    if len(tunable) == 1:
        name = tunable[0]
        for block, w in itertools.product(_lone_block_space(current[name], reports), WARP_SPACE):
            configs.append({"kwargs": {name: block}, "num_warps": w, "num_stages": stages})
        return _unique(configs)
    if tunable:
        base = [current[n] for n in tunable]
        if len(tunable) <= 3:
            scale_sets = list(itertools.product((0.5, 1, 2), repeat=len(tunable)))
        else:
            scale_sets = [(s,) * len(tunable) for s in (0.5, 1, 2)]
        for scales in scale_sets:
            values = [max(16, int(v * s)) for v, s in zip(base, scales)]
            total = 1
            for v in values:
                total *= v
            if not 256 <= total <= TILE_ELEMENTS_CAP:
                continue
            for w in WARP_SPACE:
                configs.append({"kwargs": dict(zip(tunable, values)), "num_warps": w, "num_stages": stages})
        return _unique(configs)
    for w in (2, 4, 8, 16):
        configs.append({"kwargs": {}, "num_warps": w, "num_stages": stages})
    return _unique(configs)


def _lone_block_space(current: int, reports: list[KernelReport]) -> list[int]:
    """Sizes for the one free tile size: the elementwise space where it alone sizes the tile, its
    neighbours where it is one side of a larger tile (the other sides fixed by the sizes, as a
    whole row of features is); either way within TILE_ELEMENTS_CAP in every case."""
    others = max((math.prod(tile.shape) // current for report in reports for tile in report.tiles
                  if current in tile.shape), default=1)
    space = BLOCK_SPACE if others == 1 else (max(16, current // 2), current * 2, current * 4)
    return [block for block in space if block * others <= TILE_ELEMENTS_CAP]


def _unique(configs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen, result = set(), []
    for config in configs:
        key = (tuple(sorted(config["kwargs"].items())), config["num_warps"], config["num_stages"])
        if key not in seen:
            seen.add(key)
            result.append(config)
    return result


def _static_option(launch_plan: LaunchPlan, name: str, default: int) -> int:
    import ast

    node = launch_plan.options.get(name)
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    return default


def _key(ctx: TriageContext, kernel: Any, reports: list[KernelReport]) -> list[str]:
    """Integer arguments whose values differ between cases (all integer arguments without cases)."""
    pointers = {a.base for r in reports for a in r.accesses if a.base}
    analyses = analyses_of(ctx, kernel.name)
    if analyses:
        values: dict[str, set] = {}
        for analysis in analyses:
            for name, arg in analysis.launch.args.items():
                if arg.kind == "int":
                    values.setdefault(name, set()).add(arg.value)
        varying = [p.name for p in kernel.params if len(values.get(p.name, ())) > 1]
        if varying:
            return varying
        return [p.name for p in kernel.params if p.name in values]
    return [p.name for p in kernel.params if not p.constexpr and p.name not in pointers]


def _decorator(source: str, kernel: Any, configs: list[dict[str, Any]], key: list[str],
               reports: list[KernelReport]) -> Edit:
    indent = indentation(source, kernel.jit.lineno)
    atomics = sorted({a.base for r in reports for a in r.accesses if a.op == "atomic" and a.base})
    loaded = {a.base for r in reports for a in r.accesses if a.op == "load" and a.base}
    stored = {a.base for r in reports for a in r.accesses if a.op == "store" and a.base}
    restore = sorted((loaded & stored) - set(atomics))
    lines = [f"{indent}@triton.autotune(", f"{indent}    configs=["]
    for config in configs:
        kwargs = ", ".join(f"{k!r}: {v}" for k, v in config["kwargs"].items())
        lines.append(f"{indent}        triton.Config({{{kwargs}}}, num_warps={config['num_warps']}, "
                     f"num_stages={config['num_stages']}),")
    lines.append(f"{indent}    ],")
    lines.append(f"{indent}    key={key!r},")
    if atomics:
        lines.append(f"{indent}    reset_to_zero={atomics!r},")
    if restore:
        lines.append(f"{indent}    restore_value={restore!r},")
    lines.append(f"{indent})")
    first = min(d.lineno for d in kernel.node.decorator_list)
    return insert_before_line(source, first, "\n".join(lines) + "\n")


def _launch_edits(source: str, launch_plan: LaunchPlan, tunable: list[str], plans: list[LaunchPlan]) -> list[Edit]:
    site = launch_plan.site
    edits = []
    refs: dict[int, str] = {}
    for name in tunable:
        for node in launch_plan.params[name].grid_refs:
            refs[id(node)] = f'META["{name}"]'
    grid_text = render(source, launch_plan.grid, refs)
    new_grid = f"lambda META: {grid_text}" if refs else grid_text
    if launch_plan.grid_assign is not None and not _used_elsewhere(source, launch_plan, plans):
        edits.append(remove_statement(source, launch_plan.grid_assign))
    start, end = span(source, site.grid)
    edits.append(Edit(start, end, new_grid))
    for name in list(tunable) + [o for o in ("num_warps", "num_stages") if o in launch_plan.options]:
        start, end = keyword_span(source, site.node, name)
        edits.append(Edit(start, end, ""))
    return edits


def _used_elsewhere(source: str, launch_plan: LaunchPlan, plans: list[LaunchPlan]) -> bool:
    """Is the grid variable read anywhere but this launch's subscript?"""
    import ast

    target = launch_plan.grid_assign.targets[0]
    if not isinstance(target, ast.Name) or launch_plan.site.function is None:
        return True
    uses = [n for n in ast.walk(launch_plan.site.function)
            if isinstance(n, ast.Name) and n.id == target.id and isinstance(n.ctx, ast.Load)]
    grid_nodes = {id(p.site.grid) for p in plans}
    return any(id(n) not in grid_nodes for n in uses)
