"""npu.grid-exceeds-cores -> one program per core, each walking its share of the blocks in a loop.

An Ascend grid maps to physical cores: programs beyond the core count run in further rounds,
each round paying the scheduling cost again (Triton-Ascend's migration guide). The rewrite keeps
every block and what it computes, and only changes who computes it: the kernel's body goes inside

    for block in range(tl.program_id(0), n_blocks, tl.num_programs(0)):

with `tl.program_id(0)` in the body replaced by `block`, the launch gets `min(blocks, cores)`
programs (vector cores, or AI cores for a kernel with tl.dot, from the device table) and passes
the original number of blocks as the new argument `n_blocks`. Only 1-D grids are rewritten, and
only kernels whose body neither returns early (a `return` in the loop would end the program's
other blocks too) nor reads tl.num_programs (its meaning changes).
"""
from __future__ import annotations

import ast
from typing import Optional

from ladder.diagnoser.evidence import Finding

from ..context import TriageContext
from .common import context_for, fresh_name, reports_of, target_kernels, tl_name
from .edit import Edit, NotApplicable, apply, line_offsets, replace, segment, span
from .launch import grid_expression, sites_for

PATTERN = "npu.grid-exceeds-cores"


def fix_grid_exceeds_cores(source: str, finding: Optional[Finding], ctx: Optional[TriageContext]) -> str:
    ctx = context_for(source, ctx)
    edits: list[Edit] = []
    for kernel in target_kernels(ctx, finding, PATTERN):
        module = ctx.source
        body = [statement for statement in kernel.node.body if not _is_docstring(statement)]
        calls = [node for statement in body for node in ast.walk(statement) if isinstance(node, ast.Call)]
        if any(module.canonical(call.func) == "tl.num_programs" for call in calls):
            raise NotApplicable(f"{PATTERN}: {kernel.name} already reads tl.num_programs")
        if any(isinstance(node, ast.Return) for statement in body for node in ast.walk(statement)):
            raise NotApplicable(f"{PATTERN}: {kernel.name} returns early, which a loop over blocks would break")
        program_ids = [call for call in calls if module.canonical(call.func) == "tl.program_id"]
        if any(_axis(call) != 0 for call in program_ids):
            raise NotApplicable(f"{PATTERN}: {kernel.name} uses a 2-D or 3-D grid; flatten it to 1-D first")
        block, count = fresh_name(ctx, kernel, "block"), fresh_name(ctx, kernel, "n_blocks")
        edits.append(_loop_over_blocks(source, body, program_ids, block, count, tl_name(ctx)))
        position = next((p.index for p in kernel.params if p.constexpr or p.default is not None), len(kernel.params))
        edits.append(_parameter(source, kernel.node, position, count))
        cores = _cores(ctx, kernel.name)
        for site in sites_for(module, kernel.name):
            edits.extend(_launch(source, site, position, count, cores))
    return apply(source, edits)


def _is_docstring(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) \
        and isinstance(statement.value.value, str)


def _axis(call: ast.Call) -> Optional[int]:
    node = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "axis"), None)
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, int) else None


def _cores(ctx: TriageContext, kernel: str) -> int:
    """One program per vector core, or per AI core for a kernel with tl.dot (cube work)."""
    cube = any(report.dots for report in reports_of(ctx, kernel))
    key = "aicore_count" if cube else "vectorcore_count"
    if key not in ctx.device:
        raise NotApplicable(f"{PATTERN}: the device table has no {key}")
    return int(ctx.device[key])


def _loop_over_blocks(source: str, body: list[ast.stmt], program_ids: list[ast.Call], block: str, count: str,
                      tl: str) -> Edit:
    """The body, indented under the loop over this program's blocks, `tl.program_id(0)` -> `block`."""
    offsets = line_offsets(source)
    start, end = offsets[body[0].lineno - 1], span(source, body[-1])[1]
    text = source[start:end]
    for call in sorted(program_ids, key=lambda c: span(source, c)[0], reverse=True):
        first, last = span(source, call)
        text = text[:first - start] + block + text[last - start:]
    indent = source[start:start + body[0].col_offset]
    lines = [("    " + line) if line.strip() else line for line in text.split("\n")]
    header = f"{indent}for {block} in range({tl}.program_id(0), {count}, {tl}.num_programs(0)):\n"
    return Edit(start, end, header + "\n".join(lines))


def _parameter(source: str, function: ast.FunctionDef, position: int, name: str) -> Edit:
    """`name` inserted into the signature before the parameter at `position` (or at the end)."""
    params = function.args.args
    if position < len(params):
        start = span(source, params[position])[0]
        return Edit(start, start, f"{name}, ")
    end = span(source, params[-1])[1]
    return Edit(end, end, f", {name}")


def _launch(source: str, site, position: int, count: str, cores: int) -> list[Edit]:
    """The launch at `site`: `min(blocks, cores)` programs, and `blocks` passed as `count`."""
    grid, _ = grid_expression(site)
    if not isinstance(grid, (ast.Tuple, ast.List)) or not grid.elts:
        raise NotApplicable(f"{PATTERN}: the grid at line {site.line} is not a tuple the rewrite can read")
    if any(not (isinstance(e, ast.Constant) and e.value == 1) for e in grid.elts[1:]):
        raise NotApplicable(f"{PATTERN}: the grid at line {site.line} is not 1-D")
    blocks = segment(source, grid.elts[0])
    edits = [replace(source, grid.elts[0], f"min({blocks}, {cores})")]
    call = site.node
    if len(call.args) > position:
        start = span(source, call.args[position])[0]
        edits.append(Edit(start, start, f"{blocks}, "))
    else:
        last = max([*call.args, *call.keywords], key=lambda node: span(source, node)[1], default=None)
        if last is None:
            raise NotApplicable(f"{PATTERN}: the launch at line {site.line} passes no arguments")
        end = span(source, last)[1]
        edits.append(Edit(end, end, f", {count}={blocks}"))
    return edits
