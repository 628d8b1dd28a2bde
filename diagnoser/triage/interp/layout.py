"""Layout-changing ops (trans, permute, reshape, a loaded vector broadcast to a tile) and what
consumes their results (a dot, a store, anything else): detectors judge the layout conversion each
one implies by where it goes and whether it sits in a loop.
"""
from __future__ import annotations

import ast
import math
from typing import TYPE_CHECKING

from ..axisinfo import AxisInfo
from .report import LayoutOp
from .values import V

if TYPE_CHECKING:
    from .walker import KernelWalker


def layout_op(walker: KernelWalker, op: str, value: V, node: ast.AST, shape: tuple[int, ...]) -> V:
    key = walker.record_key("layout", node)
    if key not in walker.records:
        record = LayoutOp(id(node), getattr(node, "lineno", 0), op, tuple(walker.loop_stack), value.origins,
                          of_dot="dot" in value.deps)
        walker.records[key] = record
        walker.report.layout_ops.append(record)
    return V(value.kind, shape, AxisInfo.pessimistic(max(len(shape), 1)) if value.info else None, value.bits,
             deps=value.deps | {"layout", f"layout:{id(node)}"}, base=value.base, origins=value.origins)


def mark_layout_use(walker: KernelWalker, value: V, use: str) -> None:
    ids = {int(tag.split(":")[1]) for tag in value.deps if tag.startswith("layout:")}
    for record in walker.report.layout_ops:
        if record.node_id in ids:
            setattr(record, use, True)


def note_loaded_vector_broadcast(walker: KernelWalker, value: V, node: ast.AST, along: int) -> None:
    """A vector loaded in this loop iteration, expanded to meet a tile: it was loaded in its
    own 1-D layout and must be converted to a slice of the tile's layout. RemoveLayoutConversions
    rematerialises the load in the slice layout instead only when it is cheap (fewer elements
    than threads: isExpensiveLoadOrStore), so otherwise the conversion stays in the loop."""
    if not walker.loop_stack or math.prod(value.shape) < 32 * walker.num_warps:
        return
    loop = walker.loop_stack[-1]
    loads = [walker.accesses.get(origin) for origin in value.origins]
    vector = next((a for a in loads if a is not None and a.op == "load" and len(a.shape) == 1 and loop in a.loops),
                  None)
    if vector is not None:
        layout_op(walker, "broadcast", value, node, value.shape)
        record = walker.records[walker.record_key("layout", node)]
        record.vector, record.axis = vector, along
