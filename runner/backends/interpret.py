"""CPU backend: Triton's interpreter (``TRITON_INTERPRET=1``) runs kernels as NumPy on the host.

Correctness only: the interpreter executes programs one by one in Python, so its times say nothing
about a GPU. Triton's launcher is bypassed, so the launch hook never fires; the runner counts
launches by wrapping ``InterpretedFunction.run`` instead (see ``ladder.runner.guards``). Triton's autotuner
asks the (absent) device driver for a benchmarker; here it gets a host-clock one, so autotuned
kernels run, every config and its hooks included, as they would on a device. Two gaps between the
interpreter and the compiler that real kernels fall into are closed here: a float argument is an fp32
scalar (``eps.to(tl.float32)`` works, as compiled), a dtype passed to a device function is a constexpr
(``dtype.value`` works, as compiled), libdevice's math (``tanh``, ``rsqrt``,
``erf``...) runs as NumPy instead of returning None, and bfloat16 arithmetic and sums compute on
values, not on bit patterns (``host_bf16``).
"""
from __future__ import annotations

from ladder.runner.backends import host_bf16, host_libdevice
from ladder.runner.backends.base import Backend
from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)


class InterpretBackend(Backend):
    name = "interpret"
    device_type = "cpu"
    can_time = False
    env = {"TRITON_INTERPRET": "1"}
    launch_hook_fires = False

    def device_name(self) -> str:
        return "CPU (Triton interpreter)"

    def setup(self) -> None:
        _convert_bf16_dot_operands()
        _benchmark_configs_on_the_host()
        _float_arguments_as_fp32_scalars()
        _dtype_arguments_as_constexprs()
        host_libdevice.install()
        host_bf16.install()


def _benchmark_configs_on_the_host() -> None:
    """Give the autotuner a benchmarker where it would ask the driver for one (there is none here):
    one call of each config, timed on the host clock. The choice means nothing; running each config
    (its pre-hooks, resets and restores) as on a device is the point."""
    import time

    from triton.runtime.autotuner import Autotuner

    def benchmark(kernel_call, quantiles=None, **kwargs):
        started = time.perf_counter()
        kernel_call()
        elapsed_ms = (time.perf_counter() - started) * 1e3
        return [elapsed_ms] * len(quantiles) if quantiles else elapsed_ms

    def do_bench(self):
        return self._do_bench if self._do_bench is not None else benchmark

    Autotuner.do_bench = property(do_bench)


def _float_arguments_as_fp32_scalars() -> None:
    """Pass a Python float argument to the kernel as an fp32 scalar, as the compiled launcher does.

    The interpreter converts int arguments to scalar tensors but hands floats through as Python
    floats, so a kernel calling ``eps.to(tl.float32)`` (Liger-Kernel's norms do) fails with
    "'float' object has no attribute 'to'" only under the interpreter."""
    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter

    original = interpreter._implicit_cvt
    if getattr(original, "converts_floats", False):
        return

    def implicit_cvt(arg):
        if isinstance(arg, float):
            return tl.tensor(interpreter.TensorHandle(np.array([arg], dtype=np.float32), tl.float32), tl.float32)
        return original(arg)

    implicit_cvt.converts_floats = True
    interpreter._implicit_cvt = implicit_cvt


def _dtype_arguments_as_constexprs() -> None:
    """Hand a dtype argument of a device function to it as a constexpr, as the compiler does.

    FlagGems' ``get_dtype_min(dtype)`` reads ``dtype.value``: compiled, a dtype argument arrives
    wrapped in ``tl.constexpr``; the interpreter passes the bare ``tl.dtype``."""
    import triton.language as tl
    from triton.runtime.interpreter import InterpretedFunction

    original = InterpretedFunction.__call__
    if getattr(original, "wraps_dtypes", False):
        return

    def call(self, *args, **kwargs):
        def wrapped(value):
            return tl.constexpr(value) if isinstance(value, tl.dtype) else value
        return original(self, *map(wrapped, args), **{name: wrapped(value) for name, value in kwargs.items()})

    call.wraps_dtypes = True
    InterpretedFunction.__call__ = call


def _convert_bf16_dot_operands() -> None:
    """Make the interpreter's ``tl.dot`` correct for bfloat16 operands.

    The interpreter stores bfloat16 as uint16 and its ``create_dot`` converts only 8-bit float
    operands before ``np.matmul``, so a bfloat16 dot multiplies raw bit patterns (results near 1e10;
    triton-lang/triton#11584, not supported upstream). Converting the operands to float32 first, as
    the interpreter's own casts do, gives what the GPU computes: exact products, fp32 accumulation.
    """
    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter

    original = interpreter.InterpreterBuilder.create_dot
    if getattr(original, "converts_bf16", False):
        return

    def as_float32(handle):
        if handle.dtype.scalar != tl.bfloat16:
            return handle
        bits = interpreter._convert_float(handle.data, tl.bfloat16, tl.float32, None)
        return interpreter.TensorHandle(bits.view(np.float32).reshape(handle.data.shape), tl.float32)

    def create_dot(self, a, b, d, input_precision, max_num_imprecise_acc):
        return original(self, as_float32(a), as_float32(b), d, input_precision, max_num_imprecise_acc)

    create_dot.converts_bf16 = True
    interpreter.InterpreterBuilder.create_dot = create_dot


backend = InterpretBackend()
