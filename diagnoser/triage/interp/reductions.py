"""Reductions and scans: what each one costs (does it cross warps?) and whether the compiler
turns it into something else (a broadcast product summed over its shared axis becomes a dot).
"""
from __future__ import annotations

import ast
import math
from typing import TYPE_CHECKING, Optional

from .. import axisinfo as ax
from ..axisinfo import AxisInfo
from .layout import mark_layout_use
from .report import Dot, Reduction, Tile
from .values import V, dims_for

if TYPE_CHECKING:
    from .walker import KernelWalker

REDUCTIONS = {"sum", "max", "min", "argmax", "argmin", "reduce", "xor_sum"}
SCANS = {"cumsum", "cumprod", "associative_scan"}


def reduce(walker: KernelWalker, op: str, value: V, axis: Optional[int], node: ast.Call) -> V:
    shape = value.shape
    if axis is None or not shape:
        out_shape: tuple[int, ...] = ()
    else:
        axis = axis % len(shape) if shape else 0
        out_shape = shape[:axis] + shape[axis + 1:] if op not in SCANS else shape
    cross_warp = _crosses_warps(walker, value, axis)
    key = walker.record_key("reduce", node)
    if (value.op == "outer_dot" and op == "sum" and axis == 1 and len(shape) == 3 and shape[0] >= 16
            and shape[2] >= 16 and value.bits <= 32):
        return _combined_dot(walker, value, node)
    if key not in walker.records:
        record = Reduction(id(node), node.lineno, op, axis, shape, tuple(walker.loop_stack), cross_warp,
                           from_dot="dot" in value.deps, outer_product=value.op.startswith("outer"),
                           pairwise=op == "sum" and f"pairwise:{axis}" in value.deps,
                           shared_matvec=op == "sum" and value.op == f"matvec:{axis}")
        mark_layout_use(walker, value, "feeds_other")
        walker.records[key] = record
        walker.report.reductions.append(record)
        walker.reductions_by_tag[f"reduce:{id(node)}"] = record
    kind = "int" if op in ("argmax", "argmin") else value.kind
    dims = dims_for(value, shape)
    out_dims = dims if op in SCANS else (() if axis is None else dims[:axis] + dims[axis + 1:])
    return V(kind, out_shape, AxisInfo.pessimistic(max(len(out_shape), 1)) if kind == "int" else None,
             32 if kind == "int" else value.bits, deps=value.deps | {"reduce", f"reduce:{id(node)}"},
             origins=value.origins,
             dims=out_dims)


def _combined_dot(walker: KernelWalker, product: V, node: ast.Call) -> V:
    """tl.sum(a[:, :, None] * b[None, :, :], axis=1): the Combine pass (CombineBroadcastMulReduce
    in lib/Dialect/Triton/Transforms/Combine.cpp) rewrites it into a tf32 tt.dot."""
    m, k, n = product.shape
    dims = dims_for(product, product.shape)
    key = walker.record_key("dot", node)
    if key not in walker.records:
        record = Dot(id(node), node.lineno, (m, k), (k, n), product.bits, product.bits, "tf32",
                     tuple(walker.loop_stack), product.origins, m_params=dims[0], n_params=dims[2], k_params=dims[1])
        walker.records[key] = record
        walker.report.dots.append(record)
    walker.report.tiles.append(Tile(node.lineno, (m, n), 32, "acc"))
    return V("float", (m, n), None, 32, deps=product.deps | {"dot"}, dims=(dims[0], dims[2]))


def _crosses_warps(walker: KernelWalker, value: V, axis: Optional[int]) -> bool:
    """Does reducing `value` along `axis` need shared memory and a barrier between warps?"""
    shape = value.shape
    if not shape or walker.num_warps <= 1:
        return False
    if "dot" in value.deps and len(shape) == 2:
        # MMA accumulators tile M across warps (warpsPerTile along dim 0 on Hopper).
        return axis is None or axis == 0
    width_order = None
    for origin in value.origins:
        access = walker.accesses.get(origin)
        if access is not None and access.shape == shape:
            width_order = (list(access.width.order), access.width.per_thread)
            break
    order, per_thread = width_order or (list(reversed(range(len(shape)))), 1)
    size_per_thread = [1] * len(shape)
    size_per_thread[order[0]] = per_thread
    _, wpc = ax.blocked_layout(shape, size_per_thread, order, walker.num_warps)
    if axis is None:
        return math.prod(wpc) > 1
    return wpc[axis] > 1


def mark_reductions_used(walker: KernelWalker, value: V) -> None:
    """A reduction whose value a store, dot or atomic consumes within the reduction's own loop
    (directly or through state carried to the next iteration) is needed every iteration: an
    online softmax's row max feeding the P @ V dot, a scan's running carry."""
    for tag in value.deps:
        record = walker.reductions_by_tag.get(tag)
        if record is not None and record.loops and record.loops[-1] in walker.loop_stack:
            record.used_in_loop = True
