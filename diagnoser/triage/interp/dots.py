"""`tl.dot`: operand shapes and widths, precision, the loop it sits in, and the constexprs that
size M, N and K (which the tile and autotune fixes retune)."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from .layout import mark_layout_use
from .reductions import mark_reductions_used
from .report import Dot, Tile
from .syntax import call_arg
from .values import V, dims_for

if TYPE_CHECKING:
    from .walker import KernelWalker


def dot(walker: KernelWalker, node: ast.Call, env: dict[str, V]) -> V:
    a = walker.eval(call_arg(node, "input", 0), env)
    b = walker.eval(call_arg(node, "other", 1), env)
    acc_node = call_arg(node, "acc", 2)
    acc = walker.eval(acc_node, env) if acc_node is not None else None
    precision = None
    prec_node = call_arg(node, "input_precision")
    if prec_node is not None:
        precision = walker.eval(prec_node, env).py
    tf32_node = call_arg(node, "allow_tf32")
    if tf32_node is not None and walker.eval(tf32_node, env).py is False:
        precision = "ieee"
    a_shape, b_shape = a.shape, b.shape
    out_shape = a_shape[:-1] + b_shape[-1:] if a_shape and b_shape else ()
    key = walker.record_key("dot", node)
    origins = a.origins | b.origins
    if key not in walker.records:
        record = Dot(id(node), node.lineno, a_shape, b_shape, a.bits, b.bits, precision, tuple(walker.loop_stack),
                     origins, a.origins, *_dot_dims(a, b))
        walker.records[key] = record
        walker.report.dots.append(record)
    else:
        walker.records[key].operand_origins |= origins
    if out_shape:
        walker.report.tiles.append(Tile(node.lineno, out_shape, 32, "acc"))
    mark_layout_use(walker, a, "feeds_dot")
    mark_layout_use(walker, b, "feeds_dot")
    mark_reductions_used(walker, a)
    mark_reductions_used(walker, b)
    # The product is a new tensor in the MMA layout: how its operands were laid out (a tl.trans
    # feeding the dot) says nothing about what happens where it is stored.
    operands = frozenset(d for d in a.deps | b.deps if not d.startswith("layout"))
    deps = operands | {"dot"} | (acc.deps if acc is not None else frozenset())
    m, n, _ = _dot_dims(a, b)
    return V("float", out_shape, None, 32, deps=deps, dims=(m, n) if len(out_shape) == 2 else ())


def _dot_dims(a: V, b: V) -> tuple[frozenset, frozenset, frozenset]:
    a_dims, b_dims = dims_for(a, a.shape), dims_for(b, b.shape)
    if len(a_dims) < 2 or len(b_dims) < 2:
        return frozenset(), frozenset(), frozenset()
    return a_dims[-2], b_dims[-1], a_dims[-1] | b_dims[-2]
