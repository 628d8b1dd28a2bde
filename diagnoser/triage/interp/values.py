"""The abstract values the walk computes, and the pure operations on them.

A `V` carries both domains of the walk (see the package docstring): the abstract AxisInfo,
shape, element width and dependency tags, and the concrete numpy value for the sampled program
id (`conc`) when it is known. The functions here combine values without touching the walker's
state: broadcasting, joining two control-flow paths, aligning the constexprs that size each dim.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Optional

from .. import axisinfo as ax
from ..axisinfo import AxisInfo

DTYPE_BITS = {
    "float16": 16, "fp16": 16, "half": 16, "bfloat16": 16, "bf16": 16, "float32": 32, "fp32": 32,
    "float": 32, "float64": 64, "fp64": 64, "double": 64, "float8e4nv": 8, "float8e5": 8,
    "float8_e4m3fn": 8, "float8_e5m2": 8, "int8": 8, "int16": 16, "int32": 32, "int64": 64,
    "uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64, "int1": 1, "bool": 1,
}
FLOAT_DTYPES = {"float16", "fp16", "half", "bfloat16", "bf16", "float32", "fp32", "float",
                "float64", "fp64", "double", "float8e4nv", "float8e5", "float8_e4m3fn", "float8_e5m2"}


@dataclass
class Binding:
    """What one kernel argument is for this launch."""

    kind: str                       # ptr | desc | int | float | constexpr | none
    value: Any = None               # python value for ints/floats/constexprs; a descriptor's box
    dtype: str = "fp32"             # pointee dtype for pointers and descriptors
    aligned: bool = True            # pointer is 16-byte aligned
    strides: tuple = ()             # a descriptor's tensor strides, in elements


@dataclass
class V:
    kind: str                                   # int float bool ptr dtype tuple none blockptr str unknown
    shape: tuple[int, ...] = ()
    info: Optional[AxisInfo] = None
    bits: int = 32
    conc: Any = None
    py: Any = None
    deps: frozenset = frozenset()
    base: Optional[str] = None
    origins: frozenset = frozenset()
    items: tuple = ()
    op: str = ""                                # the op that produced this value (not inherited)
    dims: tuple = ()                            # per dim, the constexpr params sizing it (tl.arange ends)
    strides: tuple = ()                         # block pointers: element stride per dim (None: unknown)
    order: tuple = ()                           # block pointers: dims from fastest to slowest

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def is_tensor(self) -> bool:
        return bool(self.shape)


UNKNOWN = V("unknown")


def python_value(value: Any, deps: frozenset = frozenset()) -> V:
    """A Python constant (a literal, a constexpr, a module constant): exact in both domains."""
    if isinstance(value, bool):
        return V("bool", (), AxisInfo.of_constant(int(value)), 1, conc=int(value), py=value, deps=deps)
    if isinstance(value, int):
        return V("int", (), AxisInfo.of_constant(value), 64 if abs(value) >= 2 ** 31 else 32,
                 conc=value, py=value, deps=deps)
    if isinstance(value, float):
        return V("float", (), None, 32, py=value, deps=deps)
    if isinstance(value, str):
        return V("str", py=value, deps=deps)
    if value is None:
        return V("none", py=None, deps=deps)
    return V("unknown", py=value, deps=deps)


def broadcast_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    if not a:
        return b
    if not b:
        return a
    rank = max(len(a), len(b))
    a = (1,) * (rank - len(a)) + a
    b = (1,) * (rank - len(b)) + b
    return tuple(max(x, y) if 1 in (x, y) else x for x, y in zip(a, b))


def info_for(v: V, shape: tuple[int, ...]) -> AxisInfo:
    """The operand's AxisInfo after the implicit splat/expand/broadcast to `shape`."""
    info = v.info or AxisInfo.pessimistic(max(len(v.shape), 1))
    if not shape:
        return info
    if not v.shape:
        return ax.splat(info, shape)
    src = v.shape
    while len(src) < len(shape):
        info = ax.expand_dims(info, 0)
        src = (1,) + src
    if src != shape:
        info = ax.broadcast(info, src, shape)
    return info


def dtype_name(v: V) -> Optional[str]:
    if v.kind == "dtype":
        return v.py
    return None


def dtype_of(v: V) -> str:
    if v.kind == "float":
        return {16: "fp16", 32: "fp32", 64: "fp64"}.get(v.bits, "fp32")
    if v.kind == "int":
        return f"int{v.bits}"
    return "fp32"


def dims_for(v: V, shape: tuple[int, ...]) -> tuple:
    """`v.dims` aligned to a broadcast `shape` (size-1 dims size nothing)."""
    if not shape:
        return ()
    dims = v.dims if len(v.dims) == len(v.shape) else tuple(frozenset() for _ in v.shape)
    pad = len(shape) - len(dims)
    if pad < 0:
        return tuple(frozenset() for _ in shape)
    dims = (frozenset(),) * pad + tuple(dims)
    sizes = (1,) * pad + tuple(v.shape)
    return tuple(d if size > 1 else frozenset() for d, size in zip(dims, sizes))


def merge_dims(shape: tuple[int, ...], *values: V) -> tuple:
    aligned = [dims_for(v, shape) for v in values]
    return tuple(frozenset().union(*(a[i] for a in aligned)) for i in range(len(shape)))


def join_values(a: V, b: V) -> V:
    if a.kind != b.kind or a.shape != b.shape:
        if a.kind == b.kind == "ptr" or (a.kind in ("int", "ptr") and b.kind in ("int", "ptr")):
            shape = broadcast_shape(a.shape, b.shape)
            return V(a.kind, shape, AxisInfo.pessimistic(max(len(shape), 1)), max(a.bits, b.bits),
                     deps=a.deps | b.deps, base=a.base or b.base, py=a.py if a.kind == "ptr" else None,
                     origins=a.origins | b.origins)
        return replace(b, deps=a.deps | b.deps, origins=a.origins | b.origins)
    info = None
    if a.info is not None and b.info is not None:
        info = ax.join(a.info, b.info)
    py = a.py if a.py == b.py else None
    conc = b.conc
    return V(a.kind, a.shape, info, max(a.bits, b.bits), conc, py if a.kind != "ptr" else a.py,
             a.deps | b.deps, a.base or b.base, a.origins | b.origins, b.items)


def split_halves(value: V) -> V:
    """`tl.split`: the two halves of a tensor along its last dimension (of 2), each depending on all
    the whole did, so a dot's tile split for a two-part epilogue is still the dot's when stored."""
    shape = value.shape[:-1]
    half = V(value.kind, shape, AxisInfo.pessimistic(max(len(shape), 1)) if value.info is not None else None,
             value.bits, deps=value.deps, base=value.base, origins=value.origins, dims=value.dims[:-1])
    return V("tuple", items=(half, half))


def unknown_from(args: list[V]) -> V:
    """The result of an op the walk does not model: broadcast shape and everything it depends on."""
    shape: tuple[int, ...] = ()
    deps: frozenset = frozenset()
    origins: frozenset = frozenset()
    kind = "unknown"
    for a in args:
        if a.shape:
            shape = broadcast_shape(shape, a.shape)
        deps |= a.deps
        origins |= a.origins
        if a.kind == "float":
            kind = "float"
    return V(kind, shape, AxisInfo.pessimistic(max(len(shape), 1)), 32, deps=deps, origins=origins,
             dims=merge_dims(shape, *args))

