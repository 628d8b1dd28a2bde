"""nv.redundant-global-traffic -> the mean pass and the variance pass of a layer norm (any sum of
squared deviations from a value the first pass gave) fused into one pass of running moments.

The two-pass form reads the row once for its sum and again for the squared deviations:

    s = tl.zeros((BLOCK,), tl.float32)                  s = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, n, BLOCK):                    s_count = ...; s_mean = ...; s_m2 = ... (zeros)
        x = tl.load(p + start + cols, mask=M, other=0)  for start in range(0, n, BLOCK):
        s += x                                              x = tl.load(p + start + cols, mask=M, other=0)
    mean = tl.sum(s, axis=0) / n                            s += x
    q = tl.zeros((BLOCK,), tl.float32)          ->          s_count += tl.where(M, 1.0, 0.0)
    for start in range(0, n, BLOCK):                        s_delta = tl.where(M, x - s_mean, 0.0)
        x = tl.load(p + start + cols, mask=M, other=0)      s_mean += s_delta / tl.maximum(s_count, 1.0)
        d = tl.where(M, x - mean, 0.0)                      s_m2 += s_delta * tl.where(M, x - s_mean, 0.0)
        q += d * d                                      mean = tl.sum(s, axis=0) / n
                                                        q = s_m2 + s_count * (s_mean - mean) * (s_mean - mean)

Each lane keeps how many of the row's values it has seen, their running mean and the sum of their
squared deviations from it (Welford's update). A lane's sum of squared deviations from any value c
is ``m2 + count * (mean - c)^2``, so the one statement after the loop gives every lane what the
second pass summed, for the c the second pass used, without reading the row again; the values
agree up to rounding (Welford's is as stable as the two-pass form; sum-of-squares minus the
squared mean would not be).

Applied only where it is certain: both loops walk the same range; the second computes, after its
own local names are substituted, the first loop's value under the first loop's mask (``d =
tl.where(M, v - c, 0.0)``, or ``d = v - c`` when the first loop's load has no mask), its only other
statement is ``q += d * d`` on a zeroed ``q``, it stores nothing and nothing after it reads its
locals; ``c`` does not change in it; and nothing between the loads of the two loops can change
what they read (no store or atomic in either loop or between them, no name they read rewritten).
"""
from __future__ import annotations

import ast
import copy
from dataclasses import dataclass
from typing import Optional

from ladder.diagnoser.evidence import Finding

from ..context import TriageContext
from ..source import Kernel
from .common import fresh_name
from .edit import Edit, NotApplicable, indentation, line_offsets, remove_statement, segment
from .passes import fuse_pass_pairs, second_pass
from .syntax import added_to, argument, identity_init, is_name, is_tl_call, reads, writes, writes_memory

PATTERN = "nv.redundant-global-traffic"


@dataclass
class TwoMoments:
    """A sum pass and a squared-deviation pass over the same range, in one block."""

    block: list[ast.stmt]
    sum_loop: ast.For
    square_loop: ast.For
    sum_update: ast.stmt
    running_sum: str            # s
    sum_init: ast.Assign        # s = tl.zeros(shape, ...)
    value: ast.expr             # v: what the first loop adds to s, as written there
    mask: Optional[ast.expr]    # M of v's tl.load, as written there; None when it loads unmasked
    mask_name: Optional[str]    # a local of the first loop set to M before the sum, if one is
    centre: ast.expr            # c: what the second loop subtracts (its locals substituted)
    squares: str                # q
    squares_init: ast.Assign


def fix_one_pass_moments(source: str, finding: Optional[Finding], ctx: Optional[TriageContext]) -> str:
    return fuse_pass_pairs(source, finding, ctx, PATTERN, match, fused, "no sum pass followed by a squared-deviation pass")


def match(block: list[ast.stmt], sum_loop: ast.For, tl: str) -> TwoMoments:
    """The two-pass form starting at ``sum_loop``, or NotApplicable saying which part is missing."""
    square_loop = second_pass(block, sum_loop)
    later = block[block.index(sum_loop) + 1:]
    between = later[:later.index(square_loop)]
    if any(writes_memory(s, tl) for s in [*sum_loop.body, *between, *square_loop.body]):
        raise NotApplicable("a store or an atomic in or between the loops could change what the second one reads")
    updates = [(s, u) for s in sum_loop.body if (u := _added(s)) is not None]
    if len(updates) != 1:
        raise NotApplicable("not one running sum in the first loop")
    sum_update, (running_sum, value) = updates[0]
    if any(writes(s, running_sum) for s in sum_loop.body if s is not sum_update):
        raise NotApplicable(f"`{running_sum}` is written twice in the first loop")
    _, first = _locals(sum_loop)
    value_inlined = _substituted(value, first)
    load = _load_of(value_inlined, tl)
    if load is None:
        raise NotApplicable(f"`{ast.unparse(value)}` is not a tl.load (or its conversion)")
    mask_inlined = argument(load, "mask", 1)
    sum_init = identity_init(block, sum_loop, running_sum, tl, 0.0)
    written, second = _locals(square_loop)
    square_updates = [(s, u) for s in square_loop.body if (u := _squared(s)) is not None]
    if len(square_updates) != 1 or len(square_loop.body) != len(written) + 1:
        raise NotApplicable("the second loop does more than compute values and add one square to a sum")
    square_update, (squares, deviation) = square_updates[0]
    shifted = _deviation(second.get(deviation), tl, mask_inlined)
    if shifted is None:
        raise NotApplicable(f"`{deviation}` is not a value minus a constant"
                            + (", under the first loop's load mask" if mask_inlined is not None else ""))
    if ast.dump(shifted.left) != ast.dump(value_inlined):
        raise NotApplicable(f"the second loop's value is not the first loop's `{ast.unparse(value)}`")
    centre = shifted.right
    loop_variable = {n.id for n in ast.walk(sum_loop.target) if isinstance(n, ast.Name)}
    inputs = {n.id for n in ast.walk(value_inlined) if isinstance(n, ast.Name)} - loop_variable
    centre_inputs = {n.id for n in ast.walk(centre) if isinstance(n, ast.Name)}
    if centre_inputs & loop_variable:
        raise NotApplicable(f"`{ast.unparse(centre)}` changes from one iteration to the next")
    changed = next((name for name in sorted(inputs | centre_inputs) if any(writes(s, name) for s in square_loop.body)
                    or (name in inputs and any(writes(s, name) for s in [*sum_loop.body, *between]))), None)
    if changed is not None:
        raise NotApplicable(f"`{changed}` changes between the two loops' reads")
    after = block[block.index(square_loop) + 1:]
    leaked = next((name for name in second if name != squares and _live(after, name)), None)
    if leaked is not None:
        raise NotApplicable(f"`{leaked}` of the second loop is read after it")
    squares_init = identity_init(block, square_loop, squares, tl, 0.0)
    if any(reads(s, squares) for s in block[block.index(squares_init) + 1:block.index(square_loop)]):
        raise NotApplicable(f"`{squares}` is read before the second loop")
    before = sum_loop.body[:sum_loop.body.index(sum_update)]
    mask_name = None if mask_inlined is None else next(
        (name for name, computed in first.items() if ast.dump(computed) == ast.dump(mask_inlined)
         and any(writes(statement, name) for statement in before)), None)
    return TwoMoments(block, sum_loop, square_loop, sum_update, running_sum, sum_init, value, mask_inlined, mask_name,
                      centre, squares, squares_init)


def fused(source: str, ctx: TriageContext, kernel: Kernel, tl: str, form: TwoMoments) -> list[Edit]:
    """The edits: three running moments start beside the sum, the first loop updates them after
    the sum, and the second loop becomes the one statement that turns them into its sum of squares."""
    s = form.running_sum
    count, mean, m2, delta, valid = (fresh_name(ctx, kernel, f"{s}_{part}")
                                     for part in ("count", "mean", "m2", "delta", "valid"))
    v = segment(source, form.value)
    v = v if isinstance(form.value, (ast.Name, ast.Call, ast.Attribute, ast.Subscript)) else f"({v})"
    shape = argument(form.sum_init.value, "shape", 0)
    if shape is None:
        raise NotApplicable(f"the shape `{s}` starts with cannot be read")
    # float32 whatever the sum's type: a float16 count stops at 2048
    start_fill = f"{tl}.zeros({segment(source, shape)}, dtype={tl}.float32)"
    offsets = line_offsets(source)
    starts = "".join(f"{indentation(source, form.sum_loop.lineno)}{name} = {start_fill}\n" for name in (count, mean, m2))
    edits = [Edit(offsets[form.sum_loop.lineno - 1], offsets[form.sum_loop.lineno - 1], starts)]
    pad = indentation(source, form.sum_update.lineno)
    if form.mask is not None:
        bind = "" if form.mask_name else f"{pad}{valid} = {ast.unparse(form.mask)}\n"
        m = form.mask_name or valid
        update = (f"{bind}{pad}{count} += {tl}.where({m}, 1.0, 0.0)\n"
                  f"{pad}{delta} = {tl}.where({m}, {v} - {mean}, 0.0)\n"
                  f"{pad}{mean} += {delta} / {tl}.maximum({count}, 1.0)\n"
                  f"{pad}{m2} += {delta} * {tl}.where({m}, {v} - {mean}, 0.0)\n")
    else:
        update = (f"{pad}{count} += 1.0\n{pad}{delta} = {v} - {mean}\n{pad}{mean} += {delta} / {count}\n"
                  f"{pad}{m2} += {delta} * ({v} - {mean})\n")
    edits.append(Edit(offsets[form.sum_update.end_lineno], offsets[form.sum_update.end_lineno], update))
    if form.block.index(form.squares_init) > form.block.index(form.sum_loop):
        edits.append(remove_statement(source, form.squares_init))
    c = ast.unparse(form.centre)
    c = c if isinstance(form.centre, (ast.Name, ast.Call, ast.Attribute, ast.Subscript)) else f"({c})"
    collapsed = (f"{indentation(source, form.square_loop.lineno)}{form.squares} = "
                 f"{m2} + {count} * ({mean} - {c}) * ({mean} - {c})\n")
    edits.append(Edit(offsets[form.square_loop.lineno - 1], offsets[form.square_loop.end_lineno], collapsed))
    return edits


def _added(statement: ast.stmt) -> Optional[tuple[str, ast.expr]]:
    """(s, v) of ``s += v`` (or ``s = s + v``), ``v`` not reading ``s``."""
    accumulation = added_to(statement)
    return None if accumulation is None or reads(accumulation[1], accumulation[0]) else accumulation


def _squared(statement: ast.stmt) -> Optional[tuple[str, str]]:
    """(q, d) of ``q += d * d`` (or ``q = q + d * d``)."""
    accumulation = _added(statement)
    if accumulation is None:
        return None
    name, term = accumulation
    if isinstance(term, ast.BinOp) and isinstance(term.op, ast.Mult) and isinstance(term.left, ast.Name) \
            and is_name(term.right, term.left.id):
        return name, term.left.id
    return None


def _deviation(node: Optional[ast.expr], tl: str, mask: Optional[ast.expr]) -> Optional[ast.BinOp]:
    """``v - c`` of ``tl.where(M, v - c, 0.0)`` with this ``mask`` as M, or of ``v - c`` when the
    first loop's load has no mask."""
    if mask is not None:
        if not (is_tl_call(node, tl, "where") and len(node.args) == 3 and not node.keywords
                and isinstance(node.args[2], ast.Constant) and node.args[2].value == 0
                and ast.dump(node.args[0]) == ast.dump(mask)):
            return None
        node = node.args[1]
    return node if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub) else None


def _locals(loop: ast.For) -> tuple[dict[str, ast.expr], dict[str, ast.expr]]:
    """The loop body's assignments to a name, as written and with the earlier ones substituted
    (what each computes from the loop's inputs); a name assigned twice is refused."""
    written: dict[str, ast.expr] = {}
    inlined: dict[str, ast.expr] = {}
    for statement in loop.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
            name = statement.targets[0].id
            if name in written:
                raise NotApplicable(f"`{name}` is assigned twice in the loop at line {loop.lineno}")
            written[name], inlined[name] = statement.value, _substituted(statement.value, inlined)
    return written, inlined


def _substituted(node: ast.expr, inlined: dict[str, ast.expr]) -> ast.expr:
    """A copy of ``node`` with each name of ``inlined`` it reads replaced by that name's expression."""
    class Substitute(ast.NodeTransformer):
        def visit_Name(self, name: ast.Name) -> ast.AST:
            return copy.deepcopy(inlined[name.id]) if name.id in inlined and isinstance(name.ctx, ast.Load) else name

    return Substitute().visit(copy.deepcopy(node))


def _live(statements: list[ast.stmt], name: str) -> bool:
    """Whether ``statements`` may read ``name`` before assigning it (a loop may run no iteration, so
    its assignments never count as assigning)."""
    for statement in statements:
        if isinstance(statement, ast.For):
            if reads(statement.iter, name) or _live(statement.body, name):
                return True
        elif isinstance(statement, (ast.Assign, ast.AnnAssign)):
            if statement.value is not None and reads(statement.value, name):
                return True
            if writes(statement, name):
                return False
        elif reads(statement, name):
            return True
    return False


def _load_of(node: ast.expr, tl: str) -> Optional[ast.Call]:
    """The tl.load that ``node`` is, or converts with ``.to(...)``."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "to":
        node = node.func.value
    return node if is_tl_call(node, tl, "load") else None
