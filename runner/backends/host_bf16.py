"""bfloat16 arithmetic for Triton's interpreter, computed in float32 on the host.

NumPy has no bfloat16, so the interpreter stores it as uint16 bit patterns, and its arithmetic,
math functions and ``tl.sum`` then compute on the bits themselves: under Triton 3.6's interpreter
``x + y`` of two bfloat16 blocks gives values near 1e37 and ``tl.sum`` of 1024 normal values gives
1.5e-7. Compiled, the same kernel is right, so a correct bfloat16 kernel failed its correctness
check on the CPU. (``tl.max``, ``tl.min`` and ``tl.cumsum`` promote bfloat16 to float32 in
``triton.language`` itself and were right already; ``tl.dot`` is fixed in ``interpret``.)

Here each such operation widens its bfloat16 operands to float32 (exact), computes, and rounds the
result back to bfloat16 to nearest even, as the GPU's bfloat16 instructions round; a float32 to
bfloat16 cast rounds the same way (the interpreter truncated it). A comparison's
result is left as the interpreter makes it (0 or 1 in the operand's storage type). A bfloat16
constant (a Python float beside a bfloat16 block), which the interpreter could not make, is made.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)


def widen(bits: np.ndarray) -> np.ndarray:
    """bfloat16 bit patterns (uint16) as the float32 values they stand for (exact)."""
    return (np.asarray(bits).astype(np.uint32) << 16).view(np.float32)


def narrow(values: np.ndarray) -> np.ndarray:
    """float32 values rounded to the nearest bfloat16 (ties to even), as uint16 bit patterns."""
    values = np.asarray(values, dtype=np.float32)
    bits = values.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(values), np.uint16(0x7FC0), rounded)


def install() -> None:
    """Patch the interpreter's builder and ``tl.sum``'s reduction (idempotent)."""
    import triton.language as tl
    from triton.runtime import interpreter

    builder = interpreter.InterpreterBuilder
    if getattr(builder.binary_op, "widens_bf16", False):
        return

    def is_bf16(handle: Any) -> bool:
        return getattr(handle, "dtype", None) is not None and handle.dtype.scalar == tl.bfloat16

    def result(output: np.ndarray) -> Any:
        data = output.astype(np.uint16) if output.dtype == bool else narrow(output)
        return interpreter.TensorHandle(data, tl.bfloat16)

    def patch(name: str, make: Callable[[Callable], Callable]) -> None:
        original = getattr(builder, name)
        replacement = make(original)
        replacement.widens_bf16 = True
        setattr(builder, name, replacement)

    def binary(original: Callable) -> Callable:
        def binary_op(self, lhs, rhs, op):
            if is_bf16(lhs) and is_bf16(rhs):
                with np.errstate(all="ignore"):
                    return result(op(widen(lhs.data), widen(rhs.data)))
            return original(self, lhs, rhs, op)
        return binary_op

    def unary(original: Callable) -> Callable:
        def unary_op(self, arg, op):
            if is_bf16(arg):
                with np.errstate(all="ignore"):
                    return result(op(widen(arg.data)))
            return original(self, arg, op)
        return unary_op

    def fma(original: Callable) -> Callable:
        def create_fma(self, x, y, z):
            if is_bf16(x) and is_bf16(y) and is_bf16(z):
                return result(widen(x.data) * widen(y.data) + widen(z.data))
            return original(self, x, y, z)
        return create_fma

    def rsqrt(original: Callable) -> Callable:
        def create_rsqrt(self, arg):
            if is_bf16(arg):
                with np.errstate(all="ignore"):
                    return result(1 / np.sqrt(widen(arg.data)))
            return original(self, arg)
        return create_rsqrt

    def erf(original: Callable) -> Callable:
        def create_erf(self, arg):
            if is_bf16(arg):
                return result(interpreter.np_erf_fp32(widen(arg.data)))
            return original(self, arg)
        return create_erf

    def cast(original: Callable) -> Callable:
        def cast_impl(self, src, dst_type):
            if dst_type.scalar == tl.bfloat16 and src.dtype.scalar == tl.float32:
                return interpreter.TensorHandle(narrow(src.data), tl.bfloat16)  # compiled casts round to nearest even
            return original(self, src, dst_type)
        return cast_impl

    patch("binary_op", binary)
    patch("cast_impl", cast)
    if not hasattr(builder, "get_bf16"):  # a bfloat16 constant (`x * 2.0` of a bfloat16 x) had no builder
        def get_bf16(self, value):
            return interpreter.TensorHandle(narrow(np.array([value], dtype=np.float32)), tl.bfloat16)
        builder.get_bf16 = get_bf16
    patch("unary_op", unary)
    patch("create_fma", fma)
    patch("create_rsqrt", rsqrt)
    patch("create_erf", erf)

    reduce_sum = interpreter.ReduceOps.sum

    def sum_bf16(self, input):
        if input.dtype.scalar != tl.bfloat16:
            return reduce_sum(self, input)
        total = np.sum(widen(input.handle.data), axis=self.axis, keepdims=self.keep_dims, dtype=np.float32)
        tensor = self.to_tensor(np.asarray(total, dtype=np.float32), tl.float32)
        bits = narrow(tensor.handle.data)
        return tl.core.tensor(interpreter.TensorHandle(bits, tl.bfloat16),
                              tl.block_type(tl.bfloat16, list(bits.shape)) if tensor.type.is_block() else tl.bfloat16)

    interpreter.ReduceOps.sum = sum_bf16
