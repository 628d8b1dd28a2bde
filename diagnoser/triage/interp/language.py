"""The `tl.*` (triton.language) builtins and `triton.cdiv` / `triton.next_power_of_2`, as a table.

`BUILTINS` maps a builtin's canonical name (`SourceModule.canonical`) to the handler that
evaluates a call of it: each takes the walker, the call and the environment and returns the
call's value. Atomics, reductions and scans are matched by their last name instead, whichever
submodule spells them. Any other builtin is an opaque value that keeps its operands' shape and
dependencies (a float for math functions).
"""
from __future__ import annotations

import ast
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Callable, Optional

import numpy as np

from .. import axisinfo as ax
from ..axisinfo import AxisInfo
from .dots import dot
from .layout import layout_op
from .memory import ATOMICS, atomic, load, store
from .numeric import np_binary
from .operators import cast
from .params import constexpr_deps, descriptor, note_tile_params
from .reductions import REDUCTIONS, SCANS, reduce
from .report import Special, Tile, Where
from .syntax import call_arg
from .values import (DTYPE_BITS, FLOAT_DTYPES, V, broadcast_shape, dtype_name, info_for, merge_dims, python_value,
                     split_halves, unknown_from)

if TYPE_CHECKING:
    from .walker import KernelWalker

Handler = Callable[["KernelWalker", ast.Call, dict[str, V]], V]

ELEMENTWISE = {"exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos", "abs", "sigmoid",
               "erf", "floor", "ceil", "fma", "fdiv", "div_rn", "umulhi", "softmax", "clamp",
               "tanh", "math", "log1p", "expm1", "cast"}

# MUFU instructions per element of each special function as Triton lowers it for sm_90 (exp is a
# multiply and ex2.approx; sqrt and rsqrt one MUFU.RSQ with FMA refinement; sigmoid an ex2 and a rcp).
SPECIAL_FUNCTIONS = {"exp": 1, "exp2": 1, "log": 1, "log2": 1, "sin": 1, "cos": 1, "rsqrt": 1, "sqrt": 1,
                     "sigmoid": 2}


def call_builtin(walker: KernelWalker, name: str, node: ast.Call, env: dict[str, V]) -> V:
    handler = BUILTINS.get(name)
    if handler is not None:
        return handler(walker, node, env)
    op = name.split(".")[-1]
    if op in ATOMICS and name.startswith("tl."):
        return atomic(walker, op, node, env)
    if op in REDUCTIONS or op in SCANS:
        return _reduction(walker, op, node, env)
    return _opaque(walker, name, node, env)


def _program_id(walker: KernelWalker, node: ast.Call, env: dict[str, V]) -> V:
    axis = walker.eval(call_arg(node, "axis", 0), env).py or 0
    return V("int", (), AxisInfo.scalar(1), 32, conc=walker.pid[int(axis)], deps=frozenset({"pid", f"pid{axis}"}))


def _num_programs(walker: KernelWalker, node: ast.Call, env: dict[str, V]) -> V:
    axis = walker.eval(call_arg(node, "axis", 0), env).py or 0
    return V("int", (), AxisInfo.scalar(1), 32, conc=walker.grid[int(axis)], deps=frozenset({"num_programs"}))


def _arange(walker: KernelWalker, node: ast.Call, env: dict[str, V]) -> V:
    start_v = walker.eval(call_arg(node, "start", 0), env)
    end_v = walker.eval(call_arg(node, "end", 1), env)
    note_tile_params(walker, start_v, end_v)
    start, end = start_v.py, end_v.py
    if not isinstance(start, int) or not isinstance(end, int):
        return V("int", (), AxisInfo.pessimistic(), 32, deps=frozenset({"arange"}))
    return V("int", (end - start,), AxisInfo.make_range(start, end), 32,
             conc=np.arange(start, end, dtype=np.int64), deps=frozenset({"arange"}),
             dims=(constexpr_deps(walker, end_v),))


def _filled(walker: KernelWalker, node: ast.Call, env: dict[str, V], dtype_at: int, value_at: Optional[int]) -> V:
    """`tl.zeros(shape, dtype)` (no value: 0) and `tl.full(shape, value, dtype)`."""
    shape_v = walker.eval(call_arg(node, "shape", 0), env)
    note_tile_params(walker, *shape_v.items)
    shape = tuple(shape_v.py) if shape_v.kind == "tuple" and shape_v.py is not None else ()
    dtype = dtype_name(walker.eval(call_arg(node, "dtype", dtype_at), env)) or "fp32"
    value = walker.eval(call_arg(node, "value", value_at), env).py if value_at is not None else 0
    if shape:
        walker.report.tiles.append(Tile(node.lineno, shape, DTYPE_BITS.get(dtype, 32), "zeros"))
    if dtype in FLOAT_DTYPES:
        return V("float", shape, None, DTYPE_BITS.get(dtype, 32))
    const = value if isinstance(value, int) else None
    info = AxisInfo.of_constant(const, shape) if const is not None else AxisInfo.pessimistic(max(len(shape), 1))
    conc = np.full(shape, const, dtype=np.int64) if const is not None and shape else const
    return V("int", shape, info, DTYPE_BITS.get(dtype, 32), conc)


def _reduction(walker: KernelWalker, op: str, node: ast.Call, env: dict[str, V]) -> V:
    value = walker.eval(call_arg(node, "input", 0), env)
    axis_node = call_arg(node, "axis", 1)
    axis = walker.eval(axis_node, env).py if axis_node is not None else None
    return reduce(walker, op, value, axis, node)


def _where(walker: KernelWalker, node: ast.Call, env: dict[str, V]) -> V:
    cond = walker.eval(call_arg(node, "condition", 0), env)
    a = walker.eval(call_arg(node, "x", 1), env)
    b = walker.eval(call_arg(node, "y", 2), env)
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


def _swizzle2d(walker: KernelWalker, node: ast.Call, env: dict[str, V]) -> V:
    walker.report.pid_clamped = True
    args = [walker.eval(a, env) for a in node.args]
    items = tuple(V("int", (), AxisInfo.scalar(1), 32, deps=frozenset({"pid"}).union(*(a.deps for a in args)))
                  for _ in range(2))
    return V("tuple", items=items)


def _extremum(walker: KernelWalker, node: ast.Call, env: dict[str, V], op: str) -> V:
    """`tl.maximum` / `tl.minimum` (`op` max / min); on program-id scalars, a clamped ordering."""
    a, b = walker.eval(node.args[0], env), walker.eval(node.args[1], env)
    if not a.is_tensor and not b.is_tensor and ("pid" in a.deps or "pid" in b.deps):
        walker.report.pid_clamped = True
    if a.kind == "int" and b.kind == "int":
        shape = broadcast_shape(a.shape, b.shape)
        info = ax.binary(op, info_for(a, shape), info_for(b, shape), shape)
        conc = np_binary(op, a.conc, b.conc)
        return V("int", shape, info, max(a.bits, b.bits), conc, deps=a.deps | b.deps)
    return unknown_from([a, b])


def _hint(walker: KernelWalker, node: ast.Call, env: dict[str, V], field: str) -> V:
    """`tl.multiple_of` / `tl.max_contiguous` / `tl.max_constancy`: sets the AxisInfo `field`."""
    value = walker.eval(node.args[0], env)
    hint = walker.eval(node.args[1], env).py if len(node.args) > 1 else None
    if isinstance(hint, (list, tuple)):
        hint = tuple(hint) if all(isinstance(h, int) for h in hint) else None
    if value.info is None or not isinstance(hint, (int, tuple)):
        return value
    info = ax.with_hint(value.info, **{field: hint})
    return replace(value, info=info, deps=value.deps | {"hint"})


def _transpose(walker: KernelWalker, node: ast.Call, env: dict[str, V]) -> V:
    value = walker.eval(node.args[0], env)
    return layout_op(walker, "trans", value, node, tuple(reversed(value.shape)))


def _reshape(walker: KernelWalker, node: ast.Call, env: dict[str, V]) -> V:
    value = walker.eval(node.args[0], env)
    shape_v = walker.eval(call_arg(node, "shape", 1), env)
    shape = tuple(shape_v.py) if shape_v.kind == "tuple" and shape_v.py is not None else value.shape
    return layout_op(walker, "reshape", value, node, shape)


def _split(walker: KernelWalker, node: ast.Call, env: dict[str, V]) -> V:
    return split_halves(walker.eval(node.args[0], env))


def _broadcast_to(walker: KernelWalker, node: ast.Call, env: dict[str, V]) -> V:
    value = walker.eval(node.args[0], env)
    shape_v = walker.eval(node.args[1], env) if len(node.args) > 1 else V("none")
    shape = tuple(shape_v.py) if shape_v.kind == "tuple" and shape_v.py is not None else value.shape
    info = info_for(value, shape) if value.info is not None else None
    conc = np.broadcast_to(value.conc, shape) if isinstance(value.conc, np.ndarray) else value.conc
    return replace(value, shape=shape, info=info, conc=conc)


def _cdiv(walker: KernelWalker, node: ast.Call, env: dict[str, V]) -> V:
    a, b = walker.eval(node.args[0], env), walker.eval(node.args[1], env)
    if isinstance(a.py, int) and isinstance(b.py, int) and b.py:
        return python_value(-(-a.py // b.py))
    conc = -(-a.conc // b.conc) if isinstance(a.conc, (int, np.integer)) and isinstance(b.conc, (int, np.integer)) and b.conc else None
    return V("int", (), AxisInfo.scalar(1), max(a.bits, b.bits), conc, deps=a.deps | b.deps)


def _next_power_of_2(walker: KernelWalker, node: ast.Call, env: dict[str, V]) -> V:
    value = walker.eval(node.args[0], env).py
    return python_value(1 << (int(value) - 1).bit_length() if isinstance(value, int) and value > 0 else None)


def _make_block_ptr(walker: KernelWalker, node: ast.Call, env: dict[str, V]) -> V:
    base = walker.eval(call_arg(node, "base", 0), env)
    shape = _literal_tuple(walker.eval(call_arg(node, "block_shape", 4), env))
    strides = walker.eval(call_arg(node, "strides", 2), env)
    order = walker.eval(call_arg(node, "order", 5), env)
    args = [walker.eval(a, env) for a in node.args[1:]] + [walker.eval(k.value, env) for k in node.keywords]
    deps = base.deps.union(*(a.deps for a in args)) if args else base.deps
    concrete = _concrete_items(strides)
    return V("blockptr", shape, None, base.bits, deps=deps, base=base.base, py=base.py,
             strides=concrete if len(concrete) == len(shape) else (), order=_literal_tuple(order))


def _make_tensor_descriptor(walker: KernelWalker, node: ast.Call, env: dict[str, V]) -> V:
    """A device-side TMA descriptor: a block pointer to its box (`params.descriptor`)."""
    base = walker.eval(call_arg(node, "base", 0), env)
    strides = walker.eval(call_arg(node, "strides", 2), env)
    shape = _literal_tuple(walker.eval(call_arg(node, "block_shape", 3), env))
    walker.eval(call_arg(node, "shape", 1), env)
    dtype = base.py if isinstance(base.py, str) else None
    return descriptor(shape, dtype, _concrete_items(strides), base.base, base.deps | strides.deps)


def _literal_tuple(value: V) -> tuple:
    """A tuple argument the walk knows as Python values (a block shape, an order), else ()."""
    return tuple(value.py) if value.kind == "tuple" and value.py is not None else ()


def _concrete_items(value: V) -> tuple:
    """Each item of a tuple argument as an int where it is concrete for this launch, else None."""
    return tuple(int(i.conc) if isinstance(i.conc, (int, np.integer)) else None for i in value.items)


def _advance(walker: KernelWalker, node: ast.Call, env: dict[str, V]) -> V:
    return walker.eval(node.args[0], env)


def _no_value(walker: KernelWalker, node: ast.Call, env: dict[str, V]) -> V:
    return V("none")


def _cast(walker: KernelWalker, node: ast.Call, env: dict[str, V]) -> V:
    value = walker.eval(node.args[0], env)
    return cast(walker, value, dtype_name(walker.eval(call_arg(node, "dtype", 1), env)), node)


def _opaque(walker: KernelWalker, name: str, node: ast.Call, env: dict[str, V]) -> V:
    args = [walker.eval(a, env) for a in node.args] + [walker.eval(k.value, env) for k in node.keywords]
    result = unknown_from(args)
    op = name.split(".")[-1]
    if op in SPECIAL_FUNCTIONS:
        _record_special(walker, node, op, result.shape)
    if op in ELEMENTWISE or name.startswith("tl.math") or name.startswith("tl.extra"):
        return replace(result, kind="float", info=None)
    return result


def _record_special(walker: KernelWalker, node: ast.Call, op: str, shape: tuple[int, ...]) -> None:
    """Note a special-function call once per call site (a loop body is walked more than once)."""
    key = walker.record_key("special", node)
    if key not in walker.records:
        walker.records[key] = Special(id(node), node.lineno, op, shape, tuple(walker.loop_stack), SPECIAL_FUNCTIONS[op])
        walker.report.specials.append(walker.records[key])


BUILTINS: dict[str, Handler] = {
    "tl.program_id": _program_id,
    "tl.num_programs": _num_programs,
    "tl.arange": _arange,
    "tl.zeros": partial(_filled, dtype_at=1, value_at=None),
    "tl.full": partial(_filled, dtype_at=2, value_at=1),
    "tl.load": load,
    "tl.store": store,
    "tl.dot": dot,
    "tl.where": _where,
    "tl.swizzle2d": _swizzle2d,
    "tl.maximum": partial(_extremum, op="max"),
    "tl.minimum": partial(_extremum, op="min"),
    "tl.multiple_of": partial(_hint, field="divisibility"),
    "tl.max_contiguous": partial(_hint, field="contiguity"),
    "tl.max_constancy": partial(_hint, field="constancy"),
    "tl.trans": _transpose,
    "tl.permute": _transpose,
    "tl.reshape": _reshape,
    "tl.view": _reshape,
    "tl.broadcast_to": _broadcast_to,
    "tl.split": _split,
    "tl.cdiv": _cdiv,
    "triton.cdiv": _cdiv,
    "triton.next_power_of_2": _next_power_of_2,
    "tl.make_block_ptr": _make_block_ptr,
    "tl.make_tensor_descriptor": _make_tensor_descriptor,
    "tl.advance": _advance,
    "tl.static_assert": _no_value,
    "tl.static_print": _no_value,
    "tl.device_assert": _no_value,
    "tl.device_print": _no_value,
    "tl.debug_barrier": _no_value,
    "tl.cast": _cast,
}
