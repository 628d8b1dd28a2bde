"""Expression evaluation: one evaluator per kind of AST node, as a table (`EVALUATORS`).

A call goes, by what it names, to a `tl.*` builtin (`language`), to a method of a kernel value
(`x.to(...)`, `x.sum(axis)`), to another `@triton.jit` function (inlined into the walk), or to a
Python builtin on constexprs (`min`, `max`, `len`); anything else is an opaque value that keeps
its shape and dependencies.
"""
from __future__ import annotations

import ast
from dataclasses import replace
from typing import TYPE_CHECKING, Callable

import numpy as np

from .. import axisinfo as ax
from ..axisinfo import AxisInfo
from ..source import Kernel
from .language import call_builtin
from .layout import layout_op, note_loaded_vector_broadcast
from .memory import descriptor_load, descriptor_store
from .numeric import np_binary
from .operators import arith, binop, cast, compare, logical
from .reductions import REDUCTIONS, SCANS, reduce
from .statements import Return, exec_body
from .syntax import call_arg, literal
from .values import DTYPE_BITS, UNKNOWN, V, dtype_name, dtype_of, join_values, python_value, split_halves, unknown_from

if TYPE_CHECKING:
    from .walker import KernelWalker


def _eval_constant(walker: KernelWalker, node: ast.Constant, env: dict[str, V]) -> V:
    return python_value(node.value)


def _eval_name(walker: KernelWalker, node: ast.Name, env: dict[str, V]) -> V:
    if node.id in env:
        return env[node.id]
    if node.id in walker.module.constants:
        return python_value(walker.module.constants[node.id])
    if node.id in ("True", "False"):
        return python_value(node.id == "True")
    return UNKNOWN


def _eval_tuple(walker: KernelWalker, node: ast.Tuple, env: dict[str, V]) -> V:
    items = tuple(walker.eval(e, env) for e in node.elts)
    py = tuple(i.py for i in items) if all(i.py is not None for i in items) else None
    return V("tuple", items=items, py=py)


def _eval_ifexp(walker: KernelWalker, node: ast.IfExp, env: dict[str, V]) -> V:
    test = walker.eval(node.test, env)
    if test.py is not None and not test.is_tensor:
        return walker.eval(node.body if test.py else node.orelse, env)
    a, b = walker.eval(node.body, env), walker.eval(node.orelse, env)
    return join_values(a, b)


def _eval_attribute(walker: KernelWalker, node: ast.Attribute, env: dict[str, V]) -> V:
    name = walker.module.canonical(node)
    if name and name.startswith("tl."):
        short = name[3:]
        if short in DTYPE_BITS:
            return V("dtype", py=short)
        return V("unknown", py=name)
    base = walker.eval(node.value, env)
    if node.attr == "dtype":
        if base.kind == "ptr":
            return V("dtype", py=base.py or "fp32")
        return V("dtype", py=dtype_of(base))
    if node.attr == "shape":
        return python_value(None) if not base.shape else V("tuple", items=tuple(python_value(s) for s in base.shape), py=base.shape)
    if node.attr == "T":
        return layout_op(walker, "trans", base, node, tuple(reversed(base.shape)))
    if node.attr == "value":
        return base
    return V("unknown", py=None, deps=base.deps)


def _eval_subscript(walker: KernelWalker, node: ast.Subscript, env: dict[str, V]) -> V:
    base = walker.eval(node.value, env)
    index = node.slice
    elements = index.elts if isinstance(index, ast.Tuple) else [index]
    if base.kind == "tuple":
        idx = walker.eval(index, env).py
        if isinstance(idx, int) and -len(base.items) <= idx < len(base.items):
            return base.items[idx]
        return UNKNOWN
    info = base.info
    shape = list(base.shape)
    conc = base.conc
    conc_index = []
    d = 0
    new_shape: list[int] = []
    old_dims = base.dims if len(base.dims) == len(shape) else tuple(frozenset() for _ in shape)
    new_dims: list = []
    ok = True
    for element in elements:
        if isinstance(element, ast.Constant) and element.value is None:
            new_shape.append(1)
            new_dims.append(frozenset())
            if info is not None:
                info = ax.expand_dims(info, len(new_shape) - 1)
            conc_index.append(None)
        elif isinstance(element, ast.Slice) and element.lower is None and element.upper is None:
            if d < len(shape):
                new_shape.append(shape[d])
                new_dims.append(old_dims[d])
            d += 1
            conc_index.append(slice(None))
        else:
            ok = False
    if not ok:
        return V(base.kind, tuple(shape), None, base.bits, deps=base.deps, base=base.base, origins=base.origins)
    new_shape.extend(shape[d:])
    new_dims.extend(old_dims[d:])
    if isinstance(conc, np.ndarray):
        try:
            conc = conc[tuple(conc_index)]
        except IndexError:
            conc = None
    inserted = [i for i, e in enumerate(elements) if isinstance(e, ast.Constant) and e.value is None]
    op = f"expand:{inserted[0]}" if len(inserted) == 1 and len(elements) == len(new_shape) else ""
    if len(inserted) == 1 and len(shape) == 1 and len(new_shape) == 2:
        note_loaded_vector_broadcast(walker, base, node, along=1 - inserted[0])
    return replace(base, shape=tuple(new_shape), info=info, conc=conc, dims=tuple(new_dims), op=op)


def _eval_unaryop(walker: KernelWalker, node: ast.UnaryOp, env: dict[str, V]) -> V:
    operand = walker.eval(node.operand, env)
    if isinstance(node.op, ast.USub):
        zero = python_value(0)
        if operand.kind == "float":
            return replace(operand, py=-operand.py if operand.py is not None else None)
        return arith(walker, "sub", zero, operand, node)
    if isinstance(node.op, ast.Not):
        if operand.py is not None and not operand.is_tensor:
            return python_value(not operand.py)
        return V("bool", operand.shape, None, 1, deps=operand.deps)
    if isinstance(node.op, ast.Invert):
        return V("bool", operand.shape, None, 1, deps=operand.deps)
    return operand


def _eval_boolop(walker: KernelWalker, node: ast.BoolOp, env: dict[str, V]) -> V:
    values = [walker.eval(v, env) for v in node.values]
    if all(v.py is not None and not v.is_tensor for v in values):
        result = values[0].py
        for v in values[1:]:
            result = (result and v.py) if isinstance(node.op, ast.And) else (result or v.py)
        return python_value(result)
    deps = frozenset().union(*(v.deps for v in values))
    return V("bool", (), None, 1, deps=deps)


def _eval_binop(walker: KernelWalker, node: ast.BinOp, env: dict[str, V]) -> V:
    return binop(walker, node.op, walker.eval(node.left, env), walker.eval(node.right, env), node)


def _eval_compare(walker: KernelWalker, node: ast.Compare, env: dict[str, V]) -> V:
    left = walker.eval(node.left, env)
    result = None
    for op, comparator in zip(node.ops, node.comparators):
        right = walker.eval(comparator, env)
        current = compare(walker, op, left, right, node)
        result = current if result is None else logical("and", result, current)
        left = right
    return result or UNKNOWN


def _eval_call(walker: KernelWalker, node: ast.Call, env: dict[str, V]) -> V:
    name = walker.module.canonical(node.func) or ""
    if isinstance(node.func, ast.Attribute) and not name.startswith(("tl.", "triton.")):
        receiver = walker.eval(node.func.value, env)
        if receiver.kind != "unknown" or receiver.py is None:
            return _call_method(walker, node.func.attr, receiver, node, env)
    short = name.split(".")[-1]
    if name.startswith("tl.") or name.startswith("triton."):
        return call_builtin(walker, name, node, env)
    if short in walker.module.kernels and walker.call_depth < 8:
        return _inline(walker, walker.module.kernels[short], node, env)
    if short in ("min", "max") and node.args:
        args = [walker.eval(a, env) for a in node.args]
        if all(a.py is not None for a in args):
            return python_value((min if short == "min" else max)(a.py for a in args))
        if any("pid" in a.deps for a in args):
            walker.report.pid_clamped = True
        if len(args) == 2 and all(a.kind == "int" and not a.is_tensor for a in args):
            info = ax.binary(short, args[0].info or AxisInfo.scalar(), args[1].info or AxisInfo.scalar(), ())
            conc = np_binary(short, args[0].conc, args[1].conc)
            return V("int", (), info, max(a.bits for a in args), conc, deps=args[0].deps | args[1].deps)
    if short in ("int", "float", "bool") and node.args:
        return walker.eval(node.args[0], env)
    if short == "len" and node.args:
        value = walker.eval(node.args[0], env)
        return python_value(len(value.items)) if value.kind == "tuple" else UNKNOWN
    args = [walker.eval(a, env) for a in node.args]
    return unknown_from(args)


def _inline(walker: KernelWalker, callee: Kernel, node: ast.Call, env: dict[str, V]) -> V:
    args = [walker.eval(a, env) for a in node.args]
    local: dict[str, V] = {}
    for param, value in zip(callee.params, args):
        local[param.name] = value
    for kw in node.keywords:
        if kw.arg:
            local[kw.arg] = walker.eval(kw.value, env)
    for param in callee.params:
        if param.name not in local and param.default is not None:
            local[param.name] = python_value(literal(param.default))
    walker.call_depth += 1
    try:
        exec_body(walker, callee.node.body, local)
    except Return as ret:
        return ret.value
    finally:
        walker.call_depth -= 1
    return V("none")


def _call_method(walker: KernelWalker, attr: str, receiver: V, node: ast.Call, env: dict[str, V]) -> V:
    args = [walker.eval(a, env) for a in node.args]
    if attr == "to":
        target = args[0] if args else (walker.eval(call_arg(node, "dtype"), env))
        return cast(walker, receiver, dtype_name(target), node)
    if attr in REDUCTIONS or attr in SCANS:
        axis_node = call_arg(node, "axis", 0)
        axis = walker.eval(axis_node, env).py if axis_node is not None else None
        return reduce(walker, attr, receiver, axis, node)
    if attr in ("trans", "permute"):
        return layout_op(walker, "trans", receiver, node, tuple(reversed(receiver.shape)))
    if attr in ("reshape", "view"):
        shape = tuple(a.py for a in args) if args and all(isinstance(a.py, int) for a in args) else receiver.shape
        if len(args) == 1 and args[0].kind == "tuple" and args[0].py is not None:
            shape = tuple(args[0].py)
        return layout_op(walker, "reshape", receiver, node, shape)
    if attr == "split":
        return split_halves(receiver)
    if attr in ("item",):
        return receiver
    if receiver.kind == "blockptr" and attr in ("load", "store"):  # a tensor descriptor's box
        if attr == "load":
            return descriptor_load(walker, node, receiver)
        return descriptor_store(walker, node, receiver, args[1] if len(args) > 1 else UNKNOWN)
    return replace(unknown_from([receiver] + args), kind=receiver.kind if receiver.kind in ("float", "int") else "unknown")


EVALUATORS: dict[type, Callable[[KernelWalker, ast.expr, dict[str, V]], V]] = {
    ast.Constant: _eval_constant,
    ast.Name: _eval_name,
    ast.Tuple: _eval_tuple,
    ast.List: _eval_tuple,
    ast.IfExp: _eval_ifexp,
    ast.Attribute: _eval_attribute,
    ast.Subscript: _eval_subscript,
    ast.UnaryOp: _eval_unaryop,
    ast.BoolOp: _eval_boolop,
    ast.BinOp: _eval_binop,
    ast.Compare: _eval_compare,
    ast.Call: _eval_call,
}
