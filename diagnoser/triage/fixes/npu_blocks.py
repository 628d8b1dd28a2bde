"""Block shapes the unified buffer (UB) holds well: small enough to fit, tail axes 32-byte aligned.

npu.ub-overflow -> a sub-block loop. The program keeps its block but walks it in sub-blocks:

    for sub in range(0, BLOCK, SUB):          # the statements from the first use of the block on
        ... tl.arange(0, BLOCK) -> (sub + tl.arange(0, SUB)) ...

SUB is the largest power of two for which the tiles live at once, doubled by multibuffering, stay
within half the UB (the device table's size; the other half is headroom for the compiler's own
buffers). Only for element-wise work on the block: a reduction over it, an atomic, or state
carried from one element to the next (a name assigned before the loop and again inside) needs a
multi-pass formulation, which is not mechanical.

npu.unaligned-tail-axis -> flat accesses of contiguous rows. A block of R rows of C elements whose
rows are consecutive in memory (`rows[:, None] * C + cols[None, :]`, cols = tl.arange(0, C)) is
the same memory as one run of R*C elements: it is loaded as that run and reshaped to (R, C) on
chip, and stored reshaped back, so the copy's buffer has an aligned tail. Unmasked accesses only.
"""
from __future__ import annotations

import ast
import copy
import math
from typing import Optional

from ladder.diagnoser.evidence import Finding

from ..context import TriageContext
from .common import analyses_of, context_for, fresh_name, target_kernels, tl_name
from .edit import Edit, NotApplicable, apply, indentation, line_offsets, replace, segment, span
from .syntax import enclosing_block

UB = "npu.ub-overflow"
TAIL = "npu.unaligned-tail-axis"
UB_SHARE = 0.5  # of the unified buffer the sub-block's tiles may take, multibuffering included


# ------------------------------------------------------------------------------ the sub-block loop

def fix_ub_overflow(source: str, finding: Optional[Finding], ctx: Optional[TriageContext]) -> str:
    ctx = context_for(source, ctx)
    tl = tl_name(ctx)
    edits: list[Edit] = []
    for kernel in target_kernels(ctx, finding, UB):
        analyses = analyses_of(ctx, kernel.name)
        if not analyses:
            raise NotApplicable(f"{UB}: the sub-block size needs the problem's cases")
        extents = [_block_extent(analysis, finding) for analysis in analyses]
        aranges = [call for call in ast.walk(kernel.node) if isinstance(call, ast.Call)
                   and ctx.source.canonical(call.func) == "tl.arange"
                   and all(_arange_extent(call, a) == e for a, e in zip(analyses, extents))]
        if not aranges:
            raise NotApplicable(f"{UB}: no tl.arange spans the largest block in every case of {kernel.name}")
        first = min(aranges, key=lambda call: (call.lineno, call.col_offset))
        found = enclosing_block(kernel.node, first)
        if found is None:
            raise NotApplicable(f"{UB}: the block's tl.arange is not in a statement of the kernel")
        block, start = found
        region = block[start:]
        _check_element_wise(kernel, analyses, region)
        sub = min(_sub_block(ctx, analysis, extent) for analysis, extent in zip(analyses, extents))
        name = fresh_name(ctx, kernel, "sub")
        size = segment(source, first.args[1])
        replacements = {id(call): f"({name} + {tl}.arange(0, {sub}))" for call in aranges}
        edits.append(_wrap(source, region, f"for {name} in range(0, {size}, {sub}):", replacements))
    return apply(source, edits)


def _block_extent(analysis, finding: Optional[Finding]) -> int:
    """The length of the block axis to cut in one case: the largest tile's (on the finding's line)."""
    shaped = [tile for tile in analysis.report.tiles if tile.shape]
    tiles = [tile for tile in shaped if finding is None or not finding.line or tile.line == finding.line] or shaped
    if not tiles:
        raise NotApplicable(f"{UB}: no block tile to cut")
    return max(max(tile.shape) for tile in tiles)


def _arange_extent(call: ast.Call, analysis) -> Optional[int]:
    """The value of `tl.arange(0, END)`'s END in one case (a literal, or a constexpr of the launch);
    None when it is not known or the range does not start at 0."""
    if len(call.args) != 2 or not (isinstance(call.args[0], ast.Constant) and call.args[0].value == 0):
        return None
    end = call.args[1]
    if isinstance(end, ast.Constant) and isinstance(end.value, int):
        return end.value
    value = analysis.launch.constexprs.get(end.id) if isinstance(end, ast.Name) else None
    return value if isinstance(value, int) else None


def _check_element_wise(kernel, analyses: list, region: list[ast.stmt]) -> None:
    """NotApplicable unless the statements from the block's first use on are element-wise work."""
    first, last = region[0].lineno, region[-1].end_lineno
    inside = lambda line: first <= line <= last  # noqa: E731
    if any(inside(r.line) for a in analyses for r in a.report.reductions):
        raise NotApplicable(f"{UB}: {kernel.name} reduces over the block: sub-blocks need a multi-pass "
                            "(online) formulation, which is not mechanical")
    if any(inside(atomic.line) for a in analyses for atomic in a.report.atomics):
        raise NotApplicable(f"{UB}: {kernel.name} has atomics in the block's statements")
    if any(isinstance(node, ast.Return) for statement in region for node in ast.walk(statement)):
        raise NotApplicable(f"{UB}: {kernel.name} returns inside the block's statements")
    in_region = {id(node) for statement in region for node in ast.walk(statement)}
    outside = {node.id for node in ast.walk(kernel.node) if isinstance(node, ast.Name)
               and isinstance(node.ctx, ast.Store) and id(node) not in in_region} | {p.name for p in kernel.params}
    carried = sorted({node.id for statement in region for node in ast.walk(statement) if isinstance(node, ast.Name)
                      and isinstance(node.ctx, ast.Store) and node.id in outside})
    if carried:
        raise NotApplicable(f"{UB}: {', '.join(carried)} carries state across the block; not element-wise")


def _sub_block(ctx: TriageContext, analysis, extent: int) -> int:
    """The largest power of two whose tiles (those along the block axis, scaled down) fit UB_SHARE."""
    limit = ctx.device.get("unified_buffer_bytes")
    factor = ctx.device.get("multibuffer_factor", 1)
    if not limit:
        raise NotApplicable(f"{UB}: the device table has no unified_buffer_bytes")
    per_element = sum(math.prod(t.shape) * max(t.bits // 8, 1) for t in analysis.report.tiles
                      if t.shape and extent in t.shape) / extent
    sub = extent
    while sub > 1 and per_element * sub * factor > UB_SHARE * limit:
        sub //= 2
    if sub == extent:
        raise NotApplicable(f"{UB}: the block's tiles already fit the unified buffer")
    return sub


def _wrap(source: str, region: list[ast.stmt], header: str, replacements: dict[int, str]) -> Edit:
    """The statements of `region`, sub-nodes replaced (by id), indented under `header`."""
    offsets = line_offsets(source)
    start, end = offsets[region[0].lineno - 1], span(source, region[-1])[1]
    text = source[start:end]
    nodes = [node for statement in region for node in ast.walk(statement) if id(node) in replacements]
    for node in sorted(nodes, key=lambda n: span(source, n)[0], reverse=True):
        first, last = span(source, node)
        text = text[:first - start] + replacements[id(node)] + text[last - start:]
    indent = indentation(source, region[0].lineno)
    body = "\n".join(("    " + line) if line.strip() else line for line in text.split("\n"))
    return Edit(start, end, f"{indent}{header}\n{body}")


# ------------------------------------------------------------------------------ flat rows

def fix_unaligned_tail_axis(source: str, finding: Optional[Finding], ctx: Optional[TriageContext]) -> str:
    ctx = context_for(source, ctx)
    tl = tl_name(ctx)
    edits: dict[tuple, Edit] = {}
    for kernel in target_kernels(ctx, finding, TAIL):
        nodes = {id(node): node for node in ast.walk(kernel.node)}
        assigned = {t.id: statement for statement in ast.walk(kernel.node) if isinstance(statement, ast.Assign)
                    for t in statement.targets if isinstance(t, ast.Name)}
        for analysis in analyses_of(ctx, kernel.name):
            for access in analysis.report.accesses:
                if len(access.shape) != 2 or access.op not in ("load", "store"):
                    continue
                if finding is not None and finding.line and access.line != finding.line:
                    continue
                call = nodes.get(access.node_id)
                rows, cols = access.shape
                if not isinstance(call, ast.Call) or access.true_strides != (cols, 1):
                    continue
                edits.update(_flat_access(source, ctx, call, assigned, rows, cols, tl))
    if not edits:
        raise NotApplicable(f"{TAIL}: no unmasked [rows, cols] access of consecutive rows "
                            "(rows[:, None] * C + tl.arange(0, C)[None, :]) to flatten")
    return apply(source, edits.values())


def _flat_access(source: str, ctx: TriageContext, call: ast.Call, assigned: dict[str, ast.Assign], rows: int,
                 cols: int, tl: str) -> dict[tuple, Edit]:
    """Edits turning one 2-D access into the flat run it covers (none when it is not of that form)."""
    if len(call.args) < (1 if ctx.source.canonical(call.func) == "tl.load" else 2) or call.keywords \
            or len(call.args) > (1 if ctx.source.canonical(call.func) == "tl.load" else 2):
        return {}  # masked, or with options: left alone
    pointer = call.args[0]
    if not (isinstance(pointer, ast.BinOp) and isinstance(pointer.op, ast.Add)):
        return {}
    offsets = pointer.right
    statement = assigned.get(offsets.id) if isinstance(offsets, ast.Name) else None
    expression = statement.value if statement is not None else offsets
    parts = _rows_and_cols(ctx, expression, assigned)
    if parts is None:
        return {}
    first_row, row_count, col_count = parts
    flat = f"({first_row}) * {col_count} + {tl}.arange(0, {row_count} * {col_count})"
    edits: dict[tuple, Edit] = {}
    if statement is not None:
        name = f"{offsets.id}_flat"
        end = span(source, statement)[1]
        edits[("define", id(statement))] = Edit(end, end, f"\n{indentation(source, statement.lineno)}{name} = {flat}")
    else:
        name = flat
    base = segment(source, pointer.left)
    if ctx.source.canonical(call.func) == "tl.load":
        edits[("access", id(call))] = replace(source, call, f"{tl}.reshape({segment(source, call.func)}({base} + {name}), "
                                                            f"({row_count}, {col_count}))")
    else:
        value = segment(source, call.args[1])
        edits[("access", id(call))] = replace(source, call, f"{segment(source, call.func)}({base} + {name}, "
                                                            f"{tl}.reshape({value}, ({row_count} * {col_count},)))")
    return edits


def _rows_and_cols(ctx: TriageContext, node: ast.expr, assigned: dict[str, ast.Assign]) -> Optional[tuple[str, str, str]]:
    """(first row, R, C) as source text for `ROWS[:, None] * C + tl.arange(0, C)[None, :]`, where ROWS
    holds exactly one `tl.arange(0, R)` (directly or through a name), else None."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and isinstance(node.left, ast.BinOp)
            and isinstance(node.left.op, ast.Mult)):
        return None
    row_part, stride, col_part = node.left.left, node.left.right, node.right
    rows, cols = _expanded(row_part, "rows"), _expanded(col_part, "cols")
    if rows is None or cols is None:
        return None
    col_range = _arange_of(ctx, cols, assigned)
    if col_range is None or ast.unparse(col_range.args[1]) != ast.unparse(stride):
        return None
    found = [n for n in ast.walk(rows) if _arange_of(ctx, n, assigned) is not None]
    if len(found) != 1:
        return None
    row_range = _arange_of(ctx, found[0], assigned)
    first = ast.unparse(_replaced(rows, found[0], ast.Constant(0)))
    return first, ast.unparse(row_range.args[1]), ast.unparse(stride)


def _expanded(node: ast.expr, which: str) -> Optional[ast.expr]:
    """X for `X[:, None]` (rows) or `X[None, :]` (cols)."""
    if not (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple) and len(node.slice.elts) == 2):
        return None
    first, second = node.slice.elts
    is_none = lambda e: isinstance(e, ast.Constant) and e.value is None  # noqa: E731
    is_all = lambda e: isinstance(e, ast.Slice) and e.lower is e.upper is e.step is None  # noqa: E731
    if which == "rows" and is_all(first) and is_none(second):
        return node.value
    if which == "cols" and is_none(first) and is_all(second):
        return node.value
    return None


def _arange_of(ctx: TriageContext, node: ast.AST, assigned: dict[str, ast.Assign]) -> Optional[ast.Call]:
    """The `tl.arange(0, N)` call `node` is (directly, or a name assigned exactly that)."""
    if isinstance(node, ast.Name) and node.id in assigned:
        node = assigned[node.id].value
    if isinstance(node, ast.Call) and ctx.source.canonical(node.func) == "tl.arange" and len(node.args) == 2 \
            and isinstance(node.args[0], ast.Constant) and node.args[0].value == 0:
        return node
    return None


def _replaced(tree: ast.expr, old: ast.AST, new: ast.expr) -> ast.expr:
    """A copy of `tree` with the node `old` replaced by `new`."""
    clone = copy.deepcopy(tree)
    target = dict(zip(map(id, ast.walk(tree)), ast.walk(clone)))[id(old)]

    class Swap(ast.NodeTransformer):
        def visit(self, node):
            return new if node is target else super().visit(node)

    return Swap().visit(clone)
