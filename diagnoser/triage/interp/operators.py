"""Python operators and casts on kernel values, in both domains of the walk.

Constant operands fold in Python; the rest go through the AxisInfo lattice (`axisinfo.binary`)
and, for index math, numpy on the sampled program's values. Along the way the walk records integer
division and remainder, 64-bit integer work and the broadcast products that the compiler turns
into dots (or that are matrix products done on CUDA cores).
"""
from __future__ import annotations

import ast
from dataclasses import replace
from typing import TYPE_CHECKING, Optional

import numpy as np

from .. import axisinfo as ax
from ..axisinfo import AxisInfo
from .numeric import np_binary
from .params import note_bounds
from .report import DivMod, Int64Op, OuterProduct
from .values import (DTYPE_BITS, FLOAT_DTYPES, UNKNOWN, V, broadcast_shape, info_for, merge_dims, python_value,
                     unknown_from)

if TYPE_CHECKING:
    from .walker import KernelWalker

_PYOPS = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b, ast.Div: lambda a, b: a / b,
    ast.LShift: lambda a, b: a << b, ast.RShift: lambda a, b: a >> b, ast.Pow: lambda a, b: a ** b,
    ast.BitAnd: lambda a, b: a & b, ast.BitOr: lambda a, b: a | b, ast.BitXor: lambda a, b: a ^ b,
}
_OPNAMES = {
    ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.FloorDiv: "div", ast.Mod: "rem",
    ast.LShift: "shl", ast.RShift: "shr", ast.BitAnd: "and", ast.BitOr: "or", ast.BitXor: "xor",
    ast.Div: "fdiv",
}
_CMPOPS = {
    ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b, ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b,
}


def binop(walker: KernelWalker, op: ast.operator, a: V, b: V, node: ast.AST) -> V:
    if a.kind == "tuple" or b.kind == "tuple":
        return UNKNOWN
    if a.py is not None and b.py is not None and not a.is_tensor and not b.is_tensor \
            and a.kind not in ("ptr",) and b.kind not in ("ptr",) \
            and isinstance(a.py, (int, float)) and isinstance(b.py, (int, float)):
        try:
            value = _PYOPS[type(op)](a.py, b.py)
            return python_value(value, a.deps | b.deps)
        except (KeyError, ZeroDivisionError, OverflowError, ValueError):
            pass
    name = _OPNAMES.get(type(op))
    if name is None:
        return unknown_from([a, b])
    if name in ("div", "rem") and (a.kind == "int" or a.kind == "unknown") and (b.kind in ("int", "unknown")):
        _record_divmod(walker, node, "//" if name == "div" else "%", a, b)
    if isinstance(op, ast.Div) or a.kind == "float" or b.kind == "float":
        shape = broadcast_shape(a.shape, b.shape)
        produced = ""
        if isinstance(op, ast.Mult) and _is_outer_product(a.shape, b.shape):
            # a[:, :, None] * b[None, :, :] is what Combine turns into tt.dot when summed over axis 1
            produced = "outer_dot" if (a.op, b.op) == ("expand:2", "expand:0") else "outer"
            key = walker.record_key("outer", node)
            if key not in walker.records:
                record = OuterProduct(id(node), getattr(node, "lineno", 0), shape, tuple(walker.loop_stack))
                walker.records[key] = record
                walker.report.outer_products.append(record)
        elif isinstance(op, ast.Mult) and _shared_matvec_axis(a, b) is not None:
            produced = f"matvec:{_shared_matvec_axis(a, b)}"
        deps = a.deps | b.deps
        if isinstance(op, (ast.Sub, ast.Add)) and len(shape) == 3 and _is_outer_product(a.shape, b.shape):
            # a[:, None, :] - b[None, :, :]: every pair of rows meets along the axes both span; a
            # sum over such an axis (of squares: a distance) is a matrix product in disguise
            deps = deps | {f"pairwise:{axis}" for axis, (x, y) in enumerate(zip(a.shape, b.shape)) if x > 1 and y > 1}
        return V("float", shape, None, 32, deps=deps, origins=a.origins | b.origins, op=produced,
                 dims=merge_dims(shape, a, b))
    if name in ("and", "or", "xor") and (a.kind == "bool" or b.kind == "bool"):
        return logical(name, a, b)
    return arith(walker, name, a, b, node)


def arith(walker: KernelWalker, name: str, a: V, b: V, node: ast.AST) -> V:
    shape = broadcast_shape(a.shape, b.shape)
    if a.kind == "ptr" or b.kind == "ptr":
        ptr, off = (a, b) if a.kind == "ptr" else (b, a)
        if name not in ("add", "sub"):
            return unknown_from([a, b])
        if name == "sub":
            off = arith(walker, "sub", python_value(0), off, node)
        info = ax.binary("addptr", info_for(ptr, shape), info_for(off, shape), shape, max(ptr.bits // 8, 1))
        conc = np_binary("add", ptr.conc, off.conc)
        off = _note_int64(walker, node, off, shape)
        return V("ptr", shape, info, ptr.bits, conc, py=ptr.py, deps=ptr.deps | off.deps, base=ptr.base,
                 origins=ptr.origins | off.origins, dims=merge_dims(shape, ptr, off))
    info = ax.binary(name, info_for(a, shape), info_for(b, shape), shape)
    bits = max(a.bits if a.kind == "int" else 32, b.bits if b.kind == "int" else 32)
    conc = np_binary(name, a.conc, b.conc)
    result = V("int", shape, info, bits, conc, deps=a.deps | b.deps, origins=a.origins | b.origins,
               dims=merge_dims(shape, a, b))
    if bits == 64:
        result = _note_int64(walker, node, result, shape)
    return result


def logical(name: str, a: V, b: V) -> V:
    shape = broadcast_shape(a.shape, b.shape)
    info = ax.binary(name, info_for(a, shape), info_for(b, shape), shape)
    conc = np_binary(name, a.conc, b.conc)
    return V("bool", shape, info, 1, conc, deps=a.deps | b.deps | {"cmp_int"} & (a.deps | b.deps),
             origins=a.origins | b.origins, dims=merge_dims(shape, a, b))


def compare(walker: KernelWalker, op: ast.cmpop, a: V, b: V, node: Optional[ast.AST] = None) -> V:
    if a.py is not None and b.py is not None and not a.is_tensor and not b.is_tensor:
        try:
            return python_value(_CMPOPS[type(op)](a.py, b.py))
        except (KeyError, TypeError):
            pass
    shape = broadcast_shape(a.shape, b.shape)
    int_compare = a.kind in ("int",) and b.kind in ("int",)
    info = ax.binary("cmp", info_for(a, shape), info_for(b, shape), shape)
    conc = None
    if a.conc is not None and b.conc is not None and type(op) in _CMPOPS:
        try:
            conc = _CMPOPS[type(op)](np.asarray(a.conc), np.asarray(b.conc))
        except (TypeError, ValueError):
            conc = None
    deps = a.deps | b.deps | ({"cmp_int"} if int_compare and shape else set())
    note_bounds(walker, a, b)
    result = V("bool", shape, info, 1, conc, deps=frozenset(deps), origins=a.origins | b.origins,
               dims=merge_dims(shape, a, b))
    if node is not None and int_compare and shape and 64 in (a.bits, b.bits):
        result = _note_int64(walker, node, result, shape, "compare")
    return result


def _note_int64(walker: KernelWalker, node: ast.AST, value: V, shape: tuple[int, ...], kind: str = "arith") -> V:
    """Record 64-bit integer work and tag the value, so that an access it reaches marks it as
    index math (`memory`)."""
    if value.kind not in ("int", "bool") or (value.kind == "int" and value.bits != 64):
        return value
    key = walker.record_key("int64", node)
    if key not in walker.records:
        record = Int64Op(id(node), getattr(node, "lineno", 0), bool(shape), tuple(walker.loop_stack),
                         walker.module.segment(node)[:120], kind, "load" in value.deps)
        walker.records[key] = record
        walker.report.int64_ops.append(record)
        walker.int64_by_tag[f"i64:{id(node)}"] = record
    return replace(value, deps=value.deps | {f"i64:{id(node)}"})


def _record_divmod(walker: KernelWalker, node: ast.AST, op: str, a: V, b: V) -> None:
    key = walker.record_key("divmod", node)
    if key in walker.records:
        return
    divisor = b.info.constant if b.info is not None and b.info.constant is not None else (b.py if isinstance(b.py, int) else None)
    per_element = a.is_tensor or b.is_tensor
    record = DivMod(id(node), getattr(node, "lineno", 0), op, per_element, tuple(walker.loop_stack), divisor,
                    shape=broadcast_shape(a.shape, b.shape))
    walker.records[key] = record
    walker.report.divmods.append(record)


def cast(walker: KernelWalker, value: V, dtype: Optional[str], node: ast.AST) -> V:
    if dtype is None:
        return value
    bits = DTYPE_BITS.get(dtype, 32)
    if dtype in FLOAT_DTYPES:
        return V("float", value.shape, None, bits, deps=value.deps | ({"cast_float"} if value.kind in ("int", "bool") else set()),
                 origins=value.origins, dims=value.dims)
    if value.kind in ("int", "bool", "unknown"):
        result = V("int", value.shape, value.info or AxisInfo.pessimistic(max(value.rank, 1)), bits, value.conc,
                   deps=value.deps, origins=value.origins, dims=value.dims)
        if bits == 64:
            result = _note_int64(walker, node, result, value.shape, "cast")
        return result
    return V("int", value.shape, AxisInfo.pessimistic(max(value.rank, 1)), bits, deps=value.deps, origins=value.origins)


def _shared_matvec_axis(a: V, b: V) -> Optional[int]:
    """The axis a vector spans when one operand is a loaded 2-D matrix whose address does not
    depend on the program id and the other that vector broadcast along the matrix's other axis
    (W * v[None, :]): summed over that axis, every program multiplies the same matrix by its own
    vector, which together is a matrix product (W @ V) done as GEMVs on CUDA cores."""
    for matrix, vector in ((a, b), (b, a)):
        if len(matrix.shape) != 2 or len(vector.shape) != 2 or min(matrix.shape) <= 1:
            continue
        if "load" not in matrix.deps or "pid" in matrix.deps:
            continue
        spans = [d for d, (m, v) in enumerate(zip(matrix.shape, vector.shape)) if v == m]
        if len(spans) == 1 and vector.shape[1 - spans[0]] == 1:
            return spans[0]
    return None


def _is_outer_product(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    """Both operands are broadcast along a dim the other one spans: a[:, None] * b[None, :]."""
    if len(a) < 2 or len(b) < 2 or len(a) != len(b):
        return False
    a_only = any(x > 1 and y == 1 for x, y in zip(a, b))
    b_only = any(y > 1 and x == 1 for x, y in zip(a, b))
    return a_only and b_only

