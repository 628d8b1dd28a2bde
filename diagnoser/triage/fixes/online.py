"""nv.redundant-global-traffic -> the max pass and the sum-of-exponentials pass of a softmax, a
log-sum-exp or a cross entropy fused into one online pass.

The two-pass form reads the row once for its running maximum and again for ``sum(exp(x - max))``:

    m_i = tl.full((BLOCK,), float("-inf"), tl.float32)          s_i = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, n, BLOCK):                            for start in range(0, n, BLOCK):
        x = tl.load(...)                                            x = tl.load(...)
        m_i = tl.maximum(m_i, x)                                    m_i_next = tl.maximum(m_i, x)
    m = tl.max(m_i, axis=0)                                         ... s_i = s_i * exp(m_i - m_i_next) + exp(x - m_i_next)
    s_i = tl.zeros((BLOCK,), tl.float32)               ->           m_i = m_i_next
    for start in range(0, n, BLOCK):                            m = tl.max(m_i, axis=0)
        x = tl.load(...)                                        s_i = s_i * tl.exp(m_i - m)
        s_i += tl.exp(x - m)

Each lane keeps its own running maximum and its sum rescaled to it; after the loop one rescale to
the row's maximum gives every lane exactly the sum the second pass computed, in one read of the row
instead of two. Lanes that have seen only ``-inf`` (masked, or an all-masked block) keep a zero sum
instead of computing ``exp(-inf - -inf)``. For finite inputs the values are the same up to
rounding; a row holding ``+inf`` gives NaN in both forms.

Applied only where it is certain: the second loop has the first loop's header and recomputes the
same values (its body is the first one's statement for statement, but for the update), its only
new statement is ``s += tl.exp(v - m)`` with the ``v`` the first loop takes the maximum of and the
``m`` reduced from that maximum between the loops, both accumulators start at their identities in
the loops' block, and nothing between the loops reads the sum.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Optional

from ladder.diagnoser.evidence import Finding

from ..context import TriageContext
from ..source import Kernel
from .common import fresh_name
from .edit import Edit, NotApplicable, indentation, line_offsets, remove_statement, replace, segment
from .passes import fuse_pass_pairs, second_pass
from .reductions import reduction_of
from .syntax import added_to, identity_init, is_name, is_tl_call, reads, writes

PATTERN = "nv.redundant-global-traffic"


@dataclass
class TwoPass:
    """A max pass and a sum-of-exponentials pass over the same range, in one block."""

    block: list[ast.stmt]
    max_loop: ast.For
    sum_loop: ast.For
    max_update: ast.Assign
    running_max: str      # the per-lane maximum (M)
    value: ast.expr       # what the maximum is taken of, and the exponent's first term (v)
    row_max: str          # m = tl.max(M, ...) between the loops
    running_sum: str      # the per-lane sum (S)
    sum_init: ast.Assign


def fix_online_softmax(source: str, finding: Optional[Finding], ctx: Optional[TriageContext]) -> str:
    return fuse_pass_pairs(source, finding, ctx, PATTERN, match, fused, "no max pass followed by a sum-of-exponentials pass")


def match(block: list[ast.stmt], max_loop: ast.For, tl: str) -> TwoPass:
    """The two-pass form starting at ``max_loop``, or NotApplicable saying which part is missing."""
    sum_loop = second_pass(block, max_loop)
    later = block[block.index(max_loop) + 1:]
    updates = [(s, u) for s in max_loop.body if (u := _max_update(s, tl)) is not None]
    if len(updates) != 1:
        raise NotApplicable("not one running tl.maximum in the loop")
    max_update, (running_max, value) = updates[0]
    between = later[:later.index(sum_loop)]
    row_max = next((s.targets[0].id for s in between if isinstance(s, ast.Assign) and len(s.targets) == 1
                    and isinstance(s.targets[0], ast.Name) and _reduces(s.value, tl, "max", running_max)), None)
    if row_max is None:
        raise NotApplicable(f"`{running_max}` is not reduced with tl.max between the loops")
    recomputed = [s for s in max_loop.body if s is not max_update]
    sum_update = [s for s in sum_loop.body if not any(ast.dump(s) == ast.dump(r) for r in recomputed)]
    if len(sum_update) != 1 or len(sum_loop.body) != len(recomputed) + 1:
        raise NotApplicable("the second loop does more than recompute the first one's values and add to a sum")
    running_sum = _exp_sum(sum_update[0], tl, value, row_max)
    if running_sum is None:
        raise NotApplicable(f"the second loop's update is not `s += tl.exp({ast.unparse(value)} - {row_max})`")
    if any(writes(s, row_max) for s in between[[_target(s) for s in between].index(row_max) + 1:]):
        raise NotApplicable(f"`{row_max}` changes between the loops")
    if any(writes(s, running_max) for s in between) or any(reads(s, running_sum) or writes(s, running_sum)
                                                           for s in recomputed):
        raise NotApplicable("the loops' state is used between them")
    if any(reads(s, running_max) for s in recomputed):  # the same text, but the running max in one, the final in the other
        raise NotApplicable(f"the values both loops compute read `{running_max}`")
    identity_init(block, max_loop, running_max, tl, float("-inf"))
    sum_init = identity_init(block, sum_loop, running_sum, tl, 0.0)
    if any(reads(s, running_sum) for s in block[block.index(sum_init) + 1:block.index(sum_loop)]):
        raise NotApplicable(f"`{running_sum}` is read before the second loop")
    return TwoPass(block, max_loop, sum_loop, max_update, running_max, value, row_max, running_sum, sum_init)


def fused(source: str, ctx: TriageContext, kernel: Kernel, tl: str, form: TwoPass) -> list[Edit]:
    """The edits: the sum starts before the max loop, the max loop keeps the rescaled sum, the sum
    loop becomes one rescale to the row's maximum."""
    m, s, v = form.running_max, form.running_sum, segment(source, form.value)
    following, shift = fresh_name(ctx, kernel, f"{m}_next"), fresh_name(ctx, kernel, f"{m}_shift")
    pad = indentation(source, form.max_update.lineno)
    online = (f"{following} = {segment(source, form.max_update.value)}\n"
              f"{pad}{shift} = {tl}.where({following} == float(\"-inf\"), 0.0, {following})\n"
              f"{pad}{s} = {s} * {tl}.exp({m} - {shift}) + {tl}.exp({v} - {shift})\n"
              f"{pad}{m} = {following}")
    edits = [replace(source, form.max_update, online)]
    if form.block.index(form.sum_init) > form.block.index(form.max_loop):
        edits.append(remove_statement(source, form.sum_init))
        start = line_offsets(source)[form.max_loop.lineno - 1]
        edits.append(Edit(start, start, f"{indentation(source, form.max_loop.lineno)}{segment(source, form.sum_init)}\n"))
    offsets = line_offsets(source)
    rescale = f"{indentation(source, form.sum_loop.lineno)}{s} = {s} * {tl}.exp({m} - {form.row_max})\n"
    edits.append(Edit(offsets[form.sum_loop.lineno - 1], offsets[form.sum_loop.end_lineno], rescale))
    return edits


def _max_update(statement: ast.stmt, tl: str) -> Optional[tuple[str, ast.expr]]:
    """(M, v) of ``M = tl.maximum(M, v)`` (either order)."""
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)):
        return None
    name, value = statement.targets[0].id, statement.value
    if not (is_tl_call(value, tl, "maximum") and len(value.args) == 2 and not value.keywords):
        return None
    for mine, other in ((value.args[0], value.args[1]), (value.args[1], value.args[0])):
        if is_name(mine, name) and not reads(other, name):
            return name, other
    return None


def _exp_sum(statement: ast.stmt, tl: str, value: ast.expr, row_max: str) -> Optional[str]:
    """S of ``S += tl.exp(v - m)`` (or ``S = S + ...``), for this ``v`` and ``m``."""
    accumulation = added_to(statement)
    if accumulation is None:
        return None
    name, term = accumulation
    if not (is_tl_call(term, tl, "exp") and len(term.args) == 1 and not term.keywords):
        return None
    exponent = term.args[0]
    if isinstance(exponent, ast.BinOp) and isinstance(exponent.op, ast.Sub) and is_name(exponent.right, row_max) \
            and ast.dump(exponent.left) == ast.dump(value):
        return name
    return None


def _reduces(node: ast.expr, tl: str, op: str, name: str) -> bool:
    reduction = reduction_of(node, tl, op)
    return reduction is not None and is_name(reduction[0], name) and reduction[1] in (None, 0, -1)


def _target(statement: ast.stmt) -> Optional[str]:
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
        return statement.targets[0].id
    return None
