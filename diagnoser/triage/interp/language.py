"""The `tl.*` (triton.language) builtins and `triton.cdiv` / `triton.next_power_of_2`."""
from __future__ import annotations

import ast
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from .. import axisinfo as ax
from ..axisinfo import AxisInfo
from .dots import dot
from .layout import layout_op
from .memory import ATOMICS, atomic, load, store
from .numeric import np_binary
from .operators import cast
from .params import constexpr_deps, note_tile_params
from .reductions import REDUCTIONS, SCANS, reduce
from .report import Tile, Where
from .syntax import call_arg
from .values import (DTYPE_BITS, FLOAT_DTYPES, V, broadcast_shape, dtype_name, info_for, merge_dims, python_value,
                     unknown_from)

if TYPE_CHECKING:
    from .walker import KernelWalker

ELEMENTWISE = {"exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos", "abs", "sigmoid",
               "erf", "floor", "ceil", "fma", "fdiv", "div_rn", "umulhi", "softmax", "clamp",
               "tanh", "math", "log1p", "expm1", "cast"}


def call_builtin(walker: KernelWalker, name: str, short: str, node: ast.Call, env: dict[str, V]) -> V:
    if name == "tl.program_id":
        axis = walker.eval(call_arg(node, "axis", 0), env).py or 0
        return V("int", (), AxisInfo.scalar(1), 32, conc=walker.pid[int(axis)], deps=frozenset({"pid", f"pid{axis}"}))
    if name == "tl.num_programs":
        axis = walker.eval(call_arg(node, "axis", 0), env).py or 0
        return V("int", (), AxisInfo.scalar(1), 32, conc=walker.grid[int(axis)], deps=frozenset({"num_programs"}))
    if name == "tl.arange":
        start_v = walker.eval(call_arg(node, "start", 0), env)
        end_v = walker.eval(call_arg(node, "end", 1), env)
        note_tile_params(walker, start_v, end_v)
        start, end = start_v.py, end_v.py
        if not isinstance(start, int) or not isinstance(end, int):
            return V("int", (), AxisInfo.pessimistic(), 32, deps=frozenset({"arange"}))
        return V("int", (end - start,), AxisInfo.make_range(start, end), 32,
                 conc=np.arange(start, end, dtype=np.int64), deps=frozenset({"arange"}),
                 dims=(constexpr_deps(walker, end_v),))
    if name in ("tl.zeros", "tl.full"):
        shape_v = walker.eval(call_arg(node, "shape", 0), env)
        note_tile_params(walker, *shape_v.items)
        shape = tuple(shape_v.py) if shape_v.kind == "tuple" and shape_v.py is not None else ()
        dtype = dtype_name(walker.eval(call_arg(node, "dtype", 2 if short == "full" else 1), env)) or "fp32"
        value = walker.eval(call_arg(node, "value", 1), env).py if short == "full" else 0
        if shape:
            walker.report.tiles.append(Tile(node.lineno, shape, DTYPE_BITS.get(dtype, 32), "zeros"))
        if dtype in FLOAT_DTYPES:
            return V("float", shape, None, DTYPE_BITS.get(dtype, 32))
        const = value if isinstance(value, int) else None
        info = AxisInfo.of_constant(const, shape) if const is not None else AxisInfo.pessimistic(max(len(shape), 1))
        conc = np.full(shape, const, dtype=np.int64) if const is not None and shape else const
        return V("int", shape, info, DTYPE_BITS.get(dtype, 32), conc)
    if name in ("tl.load",):
        return load(walker, node, env)
    if name in ("tl.store",):
        return store(walker, node, env)
    if short in ATOMICS and name.startswith("tl."):
        return atomic(walker, short, node, env)
    if name == "tl.dot":
        return dot(walker, node, env)
    if short in REDUCTIONS or short in SCANS:
        value = walker.eval(call_arg(node, "input", 0), env)
        axis_node = call_arg(node, "axis", 1)
        axis = walker.eval(axis_node, env).py if axis_node is not None else None
        return reduce(walker, short, value, axis, node)
    if name == "tl.where":
        cond = walker.eval(call_arg(node, "condition", 0), env)
        a = walker.eval(call_arg(node, "x", 1), env)
        b = walker.eval(call_arg(node, "y", 2), env)
        return _where(walker, cond, a, b, node)
    if name == "tl.swizzle2d":
        walker.report.pid_clamped = True
        args = [walker.eval(a, env) for a in node.args]
        items = tuple(V("int", (), AxisInfo.scalar(1), 32, deps=frozenset({"pid"}).union(*(a.deps for a in args)))
                      for _ in range(2))
        return V("tuple", items=items)
    if name in ("tl.maximum", "tl.minimum"):
        a, b = walker.eval(node.args[0], env), walker.eval(node.args[1], env)
        if not a.is_tensor and not b.is_tensor and ("pid" in a.deps or "pid" in b.deps):
            walker.report.pid_clamped = True
        if a.kind == "int" and b.kind == "int":
            shape = broadcast_shape(a.shape, b.shape)
            info = ax.binary("max" if short == "maximum" else "min", info_for(a, shape), info_for(b, shape), shape)
            conc = np_binary("max" if short == "maximum" else "min", a.conc, b.conc)
            return V("int", shape, info, max(a.bits, b.bits), conc, deps=a.deps | b.deps)
        return unknown_from([a, b])
    if name in ("tl.multiple_of", "tl.max_contiguous", "tl.max_constancy"):
        value = walker.eval(node.args[0], env)
        hint = walker.eval(node.args[1], env).py if len(node.args) > 1 else None
        if isinstance(hint, (list, tuple)):
            hint = tuple(hint) if all(isinstance(h, int) for h in hint) else None
        if value.info is None or not isinstance(hint, (int, tuple)):
            return value
        info = ax.with_hint(value.info, **{
            "tl.multiple_of": {"divisibility": hint},
            "tl.max_contiguous": {"contiguity": hint},
            "tl.max_constancy": {"constancy": hint},
        }[name])
        return replace(value, info=info, deps=value.deps | {"hint"})
    if name in ("tl.trans", "tl.permute"):
        value = walker.eval(node.args[0], env)
        return layout_op(walker, "trans", value, node, tuple(reversed(value.shape)))
    if name in ("tl.reshape", "tl.view"):
        value = walker.eval(node.args[0], env)
        shape_v = walker.eval(call_arg(node, "shape", 1), env)
        shape = tuple(shape_v.py) if shape_v.kind == "tuple" and shape_v.py is not None else value.shape
        return layout_op(walker, "reshape", value, node, shape)
    if name == "tl.broadcast_to":
        value = walker.eval(node.args[0], env)
        shape_v = walker.eval(node.args[1], env) if len(node.args) > 1 else V("none")
        shape = tuple(shape_v.py) if shape_v.kind == "tuple" and shape_v.py is not None else value.shape
        info = info_for(value, shape) if value.info is not None else None
        conc = np.broadcast_to(value.conc, shape) if isinstance(value.conc, np.ndarray) else value.conc
        return replace(value, shape=shape, info=info, conc=conc)
    if name in ("tl.cdiv", "triton.cdiv"):
        a, b = walker.eval(node.args[0], env), walker.eval(node.args[1], env)
        if isinstance(a.py, int) and isinstance(b.py, int) and b.py:
            return python_value(-(-a.py // b.py))
        conc = -(-a.conc // b.conc) if isinstance(a.conc, (int, np.integer)) and isinstance(b.conc, (int, np.integer)) and b.conc else None
        return V("int", (), AxisInfo.scalar(1), max(a.bits, b.bits), conc, deps=a.deps | b.deps)
    if name in ("triton.next_power_of_2",):
        value = walker.eval(node.args[0], env).py
        return python_value(1 << (int(value) - 1).bit_length() if isinstance(value, int) and value > 0 else None)
    if name == "tl.make_block_ptr":
        base = walker.eval(call_arg(node, "base", 0), env)
        block_shape = walker.eval(call_arg(node, "block_shape", 4), env)
        shape = tuple(block_shape.py) if block_shape.kind == "tuple" and block_shape.py is not None else ()
        strides = walker.eval(call_arg(node, "strides", 2), env)
        order = walker.eval(call_arg(node, "order", 5), env)
        args = [walker.eval(a, env) for a in node.args[1:]] + [walker.eval(k.value, env) for k in node.keywords]
        deps = base.deps.union(*(a.deps for a in args)) if args else base.deps
        concrete = tuple(int(i.conc) if isinstance(i.conc, (int, np.integer)) else None for i in strides.items)
        return V("blockptr", shape, None, base.bits, deps=deps, base=base.base, py=base.py,
                 strides=concrete if len(concrete) == len(shape) else (),
                 order=tuple(order.py) if order.kind == "tuple" and order.py is not None else ())
    if name == "tl.advance":
        return walker.eval(node.args[0], env)
    if name in ("tl.static_assert", "tl.device_print", "tl.debug_barrier", "tl.static_print", "tl.device_assert"):
        return V("none")
    if name in ("tl.cast",):
        value = walker.eval(node.args[0], env)
        return cast(walker, value, dtype_name(walker.eval(call_arg(node, "dtype", 1), env)), node)
    args = [walker.eval(a, env) for a in node.args] + [walker.eval(k.value, env) for k in node.keywords]
    result = unknown_from(args)
    if short in ELEMENTWISE or name.startswith("tl.math") or name.startswith("tl.extra"):
        return replace(result, kind="float", info=None)
    return result


def _where(walker: KernelWalker, cond: V, a: V, b: V, node: ast.Call) -> V:
    shape = broadcast_shape(cond.shape, broadcast_shape(a.shape, b.shape))
    key = walker.record_key("where", node)
    if key not in walker.records:
        record = Where(id(node), node.lineno, "cmp_int" in cond.deps, shape)
        walker.records[key] = record
        walker.report.wheres.append(record)
    if a.kind == "int" and b.kind in ("int",) or (a.kind == "int" and b.py is not None and isinstance(b.py, int)):
        info = ax.select(info_for(cond, shape), info_for(a, shape), info_for(b, shape), len(shape))
        conc = None
        if cond.conc is not None and a.conc is not None and b.conc is not None:
            try:
                conc = np.where(cond.conc, a.conc, b.conc)
            except ValueError:
                conc = None
        return V("int", shape, info, max(a.bits, b.bits), conc, deps=cond.deps | a.deps | b.deps,
                 origins=a.origins | b.origins, dims=merge_dims(shape, cond, a, b))
    kind = "float" if "float" in (a.kind, b.kind) else a.kind
    return V(kind, shape, None, 32, deps=cond.deps | a.deps | b.deps, origins=a.origins | b.origins | cond.origins,
             dims=merge_dims(shape, cond, a, b))
