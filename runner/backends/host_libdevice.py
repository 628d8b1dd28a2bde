"""libdevice's math functions for Triton's interpreter, computed with NumPy on the host.

``triton.language.extra.libdevice`` holds stubs that the compiler swaps for the backend's libdevice;
the interpreter calls the stubs themselves, so ``tanh(x)`` returns None and the kernel fails on the
next operation (and ``triton.language.extra.cuda.libdevice`` raises "extern_elementwise not
supported"). Real kernels use these functions everywhere (GELU's tanh and erf, the norms' rsqrt), so
``install`` replaces both modules' functions by host versions before the kernel's module imports them.
Half-precision operands are computed in fp32 and rounded back, as libdevice's f32 entry points do.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)


def _round_half_away(x):
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def _erf(x):
    import torch

    return torch.erf(torch.from_numpy(np.ascontiguousarray(x))).numpy()


# name -> (NumPy function, whether the result is a predicate)
FUNCTIONS: dict[str, tuple[Callable, bool]] = {
    "tanh": (np.tanh, False), "fast_tanhf": (np.tanh, False), "rsqrt": (lambda x: 1.0 / np.sqrt(x), False),
    "sqrt": (np.sqrt, False), "erf": (_erf, False), "exp": (np.exp, False), "fast_expf": (np.exp, False),
    "exp2": (np.exp2, False), "exp10": (lambda x: np.power(10.0, x), False), "expm1": (np.expm1, False),
    "log": (np.log, False), "fast_logf": (np.log, False), "log2": (np.log2, False), "log10": (np.log10, False),
    "log1p": (np.log1p, False), "pow": (np.power, False), "sin": (np.sin, False), "cos": (np.cos, False),
    "tan": (np.tan, False), "asin": (np.arcsin, False), "acos": (np.arccos, False), "atan": (np.arctan, False),
    "atan2": (np.arctan2, False), "sinh": (np.sinh, False), "cosh": (np.cosh, False), "floor": (np.floor, False),
    "ceil": (np.ceil, False), "trunc": (np.trunc, False), "rint": (np.rint, False), "nearbyint": (np.rint, False),
    "round": (_round_half_away, False), "abs": (np.abs, False), "fabs": (np.abs, False), "fmax": (np.fmax, False),
    "fmin": (np.fmin, False), "fma": (lambda a, b, c: a * b + c, False), "div_rn": (np.divide, False),
    "fast_dividef": (np.divide, False), "isnan": (np.isnan, True), "isinf": (np.isinf, True),
    "isfinited": (np.isfinite, True), "signbit": (np.signbit, True),
}


def host_function(name: str, compute: Callable, predicate: bool) -> Callable:
    """A stand-in for libdevice's `name` that takes and returns the interpreter's tensors."""
    import triton.language as tl
    from triton.runtime.interpreter import TensorHandle

    def call(*args, **kwargs):
        tensors = [a for a in args if isinstance(a, tl.tensor)]
        if not tensors:
            raise TypeError(f"libdevice.{name} on the interpreter needs a tensor argument")
        first = next(i for i, a in enumerate(args) if isinstance(a, tl.tensor))
        dtype = tensors[0].dtype
        narrow = dtype in (tl.float16, tl.bfloat16)
        widened = [a.to(tl.float32) if isinstance(a, tl.tensor) and a.dtype in (tl.float16, tl.bfloat16) else a
                   for a in args]
        arrays = [a.handle.data if isinstance(a, tl.tensor) else np.asarray(getattr(a, "value", a)) for a in widened]
        with np.errstate(all="ignore"):
            data = np.asarray(compute(*arrays))
        element = tl.int1 if predicate else (tl.float32 if narrow else dtype)
        data = data.astype(bool if predicate else arrays[first].dtype)
        shaped = max(tensors, key=lambda t: len(t.shape))
        kind = tl.block_type(element, list(data.shape)) if shaped.type.is_block() else element
        result = tl.tensor(TensorHandle(data, element), kind)
        return result.to(dtype) if narrow and not predicate else result

    call.__name__ = name
    call.on_host = True
    return call


def install() -> None:
    """Replace libdevice's functions (both the generic stubs and CUDA's externs) by host versions."""
    import importlib

    for module_name in ("triton.language.extra.libdevice", "triton.language.extra.cuda.libdevice"):
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        for name, (compute, predicate) in FUNCTIONS.items():
            if hasattr(module, name) and not getattr(getattr(module, name), "on_host", False):
                setattr(module, name, host_function(name, compute, predicate))
