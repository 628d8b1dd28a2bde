"""nv.loop-carried-reduction -> accumulate element-wise inside the loop, reduce once after it.

A running ``acc += tl.sum(x, axis=1)`` (or ``m = tl.maximum(m, tl.max(x, axis=0))``, likewise
``tl.minimum`` / ``tl.min``) reduces across warps every iteration: partials through shared memory
and two barriers each time. An accumulator of ``x``'s own shape, updated element-wise, reduced once
after the loop, computes the same value: the same elements are combined (max and min exactly,
sums in another order).

The rewrite is made only where it is sure to keep the meaning:

- the update is a statement of the loop's own body (not under an ``if``), and the loop reads the
  accumulator nowhere else;
- the accumulator is set, in the block that holds the loop and before it, to the reduction's
  identity: ``0.0``, ``tl.float32(0.0)``, ``tl.zeros(...)`` or ``tl.full(..., 0, ...)`` for a sum,
  ``float("-inf")`` or a ``tl.full`` of it for a max (``+inf`` for a min);
- the reduced operand's shape is known from the source: built from ``tl.arange(0, BLOCK)`` vectors
  and their ``[:, None]`` / ``[None, :]`` broadcasts, so the new accumulator's shape names the same
  constexprs (an operand whose shape cannot be read off is refused, never guessed).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Optional

from ladder.diagnoser.evidence import Finding

from ..context import TriageContext
from ..source import Kernel
from .common import context_for, target_kernels, tl_name
from .edit import Edit, NotApplicable, apply, indentation, line_offsets, replace, segment
from .syntax import added_to, argument, enclosing_block, is_name, is_tl, is_tl_call, number, reads, tensor_fill, writes

PATTERN = "nv.loop-carried-reduction"
# reduction -> the element-wise combination that keeps its partial state, and its identity
COMBINE = {"sum": None, "max": "maximum", "min": "minimum"}
IDENTITY = {"sum": (0.0,), "max": (float("-inf"),), "min": (float("inf"),)}
# tl functions whose result has the broadcast shape of their tensor arguments
ELEMENTWISE = {"exp", "exp2", "log", "log2", "sqrt", "sqrt_rn", "rsqrt", "abs", "sin", "cos", "sigmoid", "erf",
               "floor", "ceil", "maximum", "minimum", "where", "fma", "fdiv", "div_rn", "clamp", "cast", "cdiv"}

Shape = tuple[str, ...]  # each dimension as source text; () for a scalar


@dataclass(frozen=True)
class Update:
    """One running reduction in a loop body: ``acc`` combined with ``op(operand, axis)``."""

    loop: ast.For
    statement: ast.stmt
    acc: str
    op: str
    operand: ast.expr
    axis: Optional[int]


def fix_loop_carried_reduction(source: str, finding: Optional[Finding], ctx: Optional[TriageContext]) -> str:
    ctx = context_for(source, ctx)
    tl = tl_name(ctx)
    edits: list[Edit] = []
    after: dict[int, str] = {}  # the end of a loop -> the reductions that follow it, in source order
    refused: list[str] = []
    for kernel in target_kernels(ctx, finding, PATTERN):
        shapes = ShapeReader(kernel, tl)
        for update in running_reductions(kernel, tl):
            if finding is not None and finding.line and not \
                    update.statement.lineno <= finding.line <= update.statement.end_lineno:
                continue
            try:
                in_loop, reduced = hoisted(source, kernel, tl, update, shapes)
            except NotApplicable as reason:
                refused.append(f"line {update.statement.lineno}: {reason}")
                continue
            edits += in_loop
            end_of_loop = line_offsets(source)[update.loop.end_lineno]
            after[end_of_loop] = after.get(end_of_loop, "") + reduced
    if not edits:
        why = refused[0] if refused else "no running tl.sum / tl.max / tl.min accumulated in a loop"
        raise NotApplicable(f"{PATTERN}: {why}")
    return apply(source, edits + [Edit(offset, offset, text) for offset, text in after.items()])


def running_reductions(kernel: Kernel, tl: str) -> list[Update]:
    """Every statement of a ``for`` body that folds a reduction into a named accumulator."""
    found = []
    for loop in (n for n in ast.walk(kernel.node) if isinstance(n, ast.For)):
        for statement in loop.body:
            update = _as_update(statement, tl)
            if update is not None:
                acc, op, operand, axis = update
                found.append(Update(loop, statement, acc, op, operand, axis))
    return found


def _as_update(statement: ast.stmt, tl: str) -> Optional[tuple[str, str, ast.expr, Optional[int]]]:
    """``acc += tl.sum(x, ...)``, ``acc = acc + tl.sum(x, ...)``, ``acc = tl.maximum(acc, tl.max(x, ...))``."""
    accumulation = added_to(statement)
    if accumulation is not None:
        reduction = reduction_of(accumulation[1], tl, "sum")
        return (accumulation[0], "sum", *reduction) if reduction else None
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)):
        return None
    acc, value = statement.targets[0].id, statement.value
    for op, combine in (("max", "maximum"), ("min", "minimum")):
        if is_tl_call(value, tl, combine) and len(value.args) == 2 and not value.keywords:
            for mine, other in ((value.args[0], value.args[1]), (value.args[1], value.args[0])):
                if is_name(mine, acc):
                    reduction = reduction_of(other, tl, op)
                    return (acc, op, *reduction) if reduction else None
    return None


def reduction_of(node: ast.expr, tl: str, op: str) -> Optional[tuple[ast.expr, Optional[int]]]:
    """(operand, axis) of ``tl.<op>(operand[, axis])``; None for anything else (keep_dims included)."""
    if not is_tl_call(node, tl, op) or not node.args:
        return None
    axis_node = node.args[1] if len(node.args) > 1 else None
    for keyword in node.keywords:
        if keyword.arg != "axis":
            return None
        axis_node = keyword.value
    if axis_node is None or (isinstance(axis_node, ast.Constant) and axis_node.value is None):
        return node.args[0], None
    if isinstance(axis_node, ast.UnaryOp) and isinstance(axis_node.op, ast.USub) \
            and isinstance(axis_node.operand, ast.Constant):
        return node.args[0], -axis_node.operand.value
    if isinstance(axis_node, ast.Constant) and isinstance(axis_node.value, int):
        return node.args[0], axis_node.value
    return None


def hoisted(source: str, kernel: Kernel, tl: str, update: Update, shapes: ShapeReader) -> tuple[list[Edit], str]:
    """One update's edits (the accumulator's fill, the update) and the line that reduces it once
    after the loop."""
    acc, loop = update.acc, update.loop
    if reads(update.operand, acc):
        raise NotApplicable(f"the reduced value depends on `{acc}` itself")
    others = [s for s in loop.body if s is not update.statement]
    if any(reads(s, acc) or writes(s, acc) for s in others):
        raise NotApplicable(f"the loop uses `{acc}` outside its update")
    init = _initialisation(kernel, loop, acc)
    shape = shapes.of(update.operand, before=update.statement)
    if shape is None:
        raise NotApplicable(f"the shape of what `{acc}` accumulates cannot be read off the source")
    rank = len(shape)
    if rank == 0:
        raise NotApplicable(f"`{acc}` already accumulates a scalar")
    axis = update.axis
    if axis is not None and not -rank <= axis < rank:
        raise NotApplicable(f"axis {axis} of a rank-{rank} value")
    kept = () if axis is None else tuple(d for i, d in enumerate(shape) if i != axis % rank)
    fill, dtype = _fill(source, init, update.op, tl, shapes)
    if fill is not None and fill != kept:
        raise NotApplicable(f"`{acc}` is {list(fill)}, the reduction gives {list(kept)}")
    dims = "(" + ", ".join(shape) + ("," if rank == 1 else "") + ")"
    identity = IDENTITY[update.op][0]
    new_init = (f"{tl}.zeros({dims}, dtype={dtype})" if update.op == "sum"
                else f"{tl}.full({dims}, float(\"{'-inf' if identity < 0 else 'inf'}\"), dtype={dtype})")
    operand = segment(source, update.operand)
    combine = COMBINE[update.op]
    new_update = (f"{acc} += {operand}" if combine is None else f"{acc} = {tl}.{combine}({acc}, {operand})")
    axis_text = "" if axis is None else f", axis={axis}"
    reduced = f"{indentation(source, loop.lineno)}{acc} = {tl}.{update.op}({acc}{axis_text})\n"
    return [replace(source, init.value, new_init), replace(source, update.statement, new_update)], reduced


def _initialisation(kernel: Kernel, loop: ast.For, acc: str) -> ast.Assign:
    """The accumulator's assignment in the loop's own block, before it, with nothing between that
    reads or writes it."""
    found = enclosing_block(kernel.node, loop)
    if found is None:
        raise NotApplicable("the loop's block was not found")
    block, position = found
    before = block[:position]
    for index in range(len(before) - 1, -1, -1):
        statement = before[index]
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and is_name(statement.targets[0], acc):
            if any(reads(s, acc) for s in before[index + 1:]):
                break
            return statement
        if writes(statement, acc):
            break
    raise NotApplicable(f"`{acc}` is not set just before the loop, in the loop's own block")


def _fill(source: str, init: ast.Assign, op: str, tl: str, shapes: ShapeReader) -> tuple[Optional[Shape], str]:
    """The shape the initial fill has (None for a plain number) and the dtype the new one keeps,
    if the fill is the reduction's identity."""
    value = init.value
    if number(value) in IDENTITY[op] and (op != "sum" or isinstance(number(value), float)):
        return None, f"{tl}.float32"
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and is_tl(value.func.value, tl) \
            and value.func.attr.startswith("float") and len(value.args) == 1 and number(value.args[0]) in IDENTITY[op]:
        return None, segment(source, value.func)  # tl.float32(0.0)
    if tensor_fill(value, tl) in IDENTITY[op]:
        dtype = argument(value, "dtype", 1 if is_tl_call(value, tl, "zeros") else 2)
        if dtype is not None:
            shape = shapes.literal(argument(value, "shape", 0))
            if shape is not None:
                return shape, segment(source, dtype)
    raise NotApplicable(f"`{segment(source, init.targets[0])}` does not start at the identity of tl.{op}")


class ShapeReader:
    """Shapes of a kernel's values as source text, where the source alone says them."""

    def __init__(self, kernel: Kernel, tl: str):
        self.tl = tl
        self.assigned: dict[str, list[ast.Assign]] = {}
        for node in ast.walk(kernel.node):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                self.assigned.setdefault(node.targets[0].id, []).append(node)
        self.known: dict[tuple[str, int], Optional[Shape]] = {}  # (name, line read at) -> shape
        self.scalars = {p.name for p in kernel.params} | {
            n.target.id for n in ast.walk(kernel.node) if isinstance(n, ast.For) and isinstance(n.target, ast.Name)}

    def of(self, node: ast.expr, before: ast.stmt, depth: int = 0) -> Optional[Shape]:
        if depth > 50:
            return None
        recurse = lambda sub: self.of(sub, before, depth + 1)  # noqa: E731
        if isinstance(node, ast.Constant) or number(node) is not None:
            return ()
        if isinstance(node, ast.Name):
            return self._name(node.id, before, depth)
        if isinstance(node, ast.BinOp):
            return broadcast(recurse(node.left), recurse(node.right))
        if isinstance(node, ast.UnaryOp):
            return recurse(node.operand)
        if isinstance(node, ast.Compare):
            return broadcast(*(recurse(n) for n in [node.left, *node.comparators]))
        if isinstance(node, ast.IfExp):
            return broadcast(recurse(node.body), recurse(node.orelse))
        if isinstance(node, ast.Subscript):
            return _indexed(recurse(node.value), node.slice)
        if isinstance(node, ast.Call):
            return self._call(node, recurse)
        return None

    def literal(self, node: Optional[ast.expr]) -> Optional[Shape]:
        """A shape written out: ``(BLOCK,)``, ``[BLOCK_M, BLOCK_K]``, ``BLOCK``."""
        if isinstance(node, (ast.Tuple, ast.List)):
            return tuple(ast.unparse(e) for e in node.elts)
        if isinstance(node, (ast.Name, ast.Constant)):
            return (ast.unparse(node),)
        return None

    def _name(self, name: str, before: ast.stmt, depth: int) -> Optional[Shape]:
        key = (name, before.lineno)
        if key not in self.known:  # values built from shared names are read once, not once per path
            assignments = [a for a in self.assigned.get(name, []) if a.lineno < before.lineno]
            if not assignments:
                self.known[key] = () if name in self.scalars else None
            else:
                shapes = {self.of(a.value, a, depth + 1) for a in assignments}
                self.known[key] = shapes.pop() if len(shapes) == 1 else None  # reassigned with another shape
        return self.known[key]

    def _call(self, node: ast.Call, recurse) -> Optional[Shape]:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "to" and not is_tl(func.value, self.tl):
            return recurse(func.value)
        if not (isinstance(func, ast.Attribute) and is_tl(func.value, self.tl)):
            return None
        if func.attr in ("program_id", "num_programs"):
            return ()
        if func.attr == "arange" and len(node.args) == 2 and number(node.args[0]) == 0:
            return (ast.unparse(node.args[1]),)
        if func.attr in ("zeros", "full"):
            return self.literal(argument(node, "shape", 0))
        if func.attr == "load":
            return recurse(argument(node, "pointer", 0))
        if func.attr in ("multiple_of", "max_contiguous", "max_constancy"):
            return recurse(node.args[0]) if node.args else None
        if func.attr in ELEMENTWISE:
            return broadcast(*(recurse(a) for a in node.args))
        return None


def broadcast(*shapes: Optional[Shape]) -> Optional[Shape]:
    """Numpy-style broadcasting of shapes written as text; None when unknown or incompatible."""
    if any(s is None for s in shapes):
        return None
    rank = max((len(s) for s in shapes), default=0)
    result = []
    for index in range(rank):
        dims = {s[index - rank + len(s)] for s in shapes if index - rank + len(s) >= 0} - {"1"}
        if len(dims) > 1:
            return None
        result.append(dims.pop() if dims else "1")
    return tuple(result)


def _indexed(shape: Optional[Shape], index: ast.expr) -> Optional[Shape]:
    """``v[:, None]``, ``v[None, :]``: new axes of length 1 around the value's own."""
    if shape is None:
        return None
    items = index.elts if isinstance(index, ast.Tuple) else [index]
    dims, taken = [], 0
    for item in items:
        if isinstance(item, ast.Constant) and item.value is None:
            dims.append("1")
        elif isinstance(item, ast.Slice) and item.lower is item.upper is item.step is None and taken < len(shape):
            dims.append(shape[taken])
            taken += 1
        else:
            return None
    return tuple(dims) if taken == len(shape) else None
