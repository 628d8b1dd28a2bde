"""The kernel's parameters: what one launch binds each to, and what the walk learns about them.

A parameter's value follows the JIT's specialization for the launch (pointers 16-byte aligned,
integers equal to 1 or divisible by 16), so the walk proves what the compiler proves. Along the way
the walk notes which constexprs size a tile or a loop step (`KernelReport.tile_params`) and which
size argument each tile is masked against (`KernelReport.bounds`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..axisinfo import AxisInfo
from .syntax import literal
from .values import DTYPE_BITS, V, python_value

if TYPE_CHECKING:
    from .walker import KernelWalker


def param_value(walker: KernelWalker, name: str) -> V:
    param = walker.kernel.param(name)
    binding = walker.bindings.get(name)
    tag = frozenset({f"param:{name}"})
    if binding is None:
        if param is not None and param.default is not None:
            value = literal(param.default)
            if value is not None:
                return python_value(value, tag)
        if param is not None and param.constexpr:
            return V("unknown", deps=tag)
        return V("int", (), AxisInfo.scalar(1), 32, deps=tag)
    # The JIT's specialization: pointers 16-byte aligned, integers equal to 1 or divisible by
    # 16 are known to the compiler, unless the kernel opts out (do_not_specialize*).
    unspecialized = name in walker.unspecialized
    unaligned = unspecialized or name in walker.unaligned
    if binding.kind == "ptr":
        bits = DTYPE_BITS.get(binding.dtype, 32)
        info = AxisInfo.scalar(16 if binding.aligned and not unaligned else max(bits // 8, 1))
        return V("ptr", (), info, bits, conc=0, deps=tag, base=name, py=binding.dtype)
    if binding.kind == "constexpr":
        return python_value(binding.value, tag)
    if binding.kind == "desc":
        return descriptor(binding.value, binding.dtype, binding.strides, name, tag)
    if binding.kind == "int":
        value = int(binding.value)
        bits = 64 if abs(value) >= 2 ** 31 else 32
        if value == 1 and not unspecialized:
            return V("int", (), AxisInfo.of_constant(1), bits, conc=1, py=1, deps=tag)
        div = 16 if value % 16 == 0 and not unaligned else 1
        return V("int", (), AxisInfo.scalar(div), bits, conc=value, deps=tag)
    if binding.kind == "float":
        return V("float", (), None, 32, deps=tag)
    return V("none", deps=tag)


def descriptor(block_shape: tuple, dtype: str | None, strides: tuple, base: str | None, deps: frozenset) -> V:
    """A TMA tensor descriptor, as a block pointer to its box: each load or store moves one box of
    `block_shape` in whole rows, its last dim the fastest."""
    rank = len(block_shape)
    return V("blockptr", tuple(block_shape), None, DTYPE_BITS.get(dtype, 32), deps=deps, base=base, py=dtype,
             strides=tuple(strides) if len(strides) == rank else (), order=tuple(reversed(range(rank))))


def note_bounds(walker: KernelWalker, a: V, b: V) -> None:
    """`offs < n`: the tile constexprs sizing `offs` are masked against the argument `n`."""
    for tensor, scalar in ((a, b), (b, a)):
        if not tensor.is_tensor or scalar.is_tensor:
            continue
        tiles = frozenset().union(*tensor.dims) if tensor.dims else frozenset()
        sizes = {tag[len("param:"):] for tag in scalar.deps if tag.startswith("param:")}
        for size in sizes:
            param = walker.kernel.param(size)
            if param is not None and not param.constexpr:
                walker.report.bounds.update((tile, size) for tile in tiles)


def constexpr_deps(walker: KernelWalker, value: V) -> frozenset:
    names = {tag[len("param:"):] for tag in value.deps if tag.startswith("param:")}
    return frozenset(n for n in names if (p := walker.kernel.param(n)) is not None and p.constexpr)


def note_tile_params(walker: KernelWalker, *values: V) -> None:
    for value in values:
        for tag in value.deps:
            if tag.startswith("param:"):
                name = tag[len("param:"):]
                param = walker.kernel.param(name)
                if param is not None and param.constexpr:
                    walker.report.tile_params.add(name)
