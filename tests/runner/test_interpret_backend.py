"""The interpreter backend runs what real kernels use and the bare interpreter does not: libdevice's
math (tanh, erf, rsqrt, isnan ...), float arguments that the kernel converts with `.to`, and dtypes
handed to a device function that reads them as constexprs (`dtype.value`)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

KERNEL = textwrap.dedent('''
    from ladder.runner.backends.interpret import backend
    backend.setup()
    import torch
    import triton
    import triton.language as tl
    from triton.language.extra.libdevice import erf, isnan, rsqrt, tanh

    @triton.jit
    def lowest(dtype):
        if dtype.value.is_floating():
            value: tl.constexpr = float("-inf")
            return value
        return 0

    @triton.jit
    def gelu_norm(x_ptr, out_ptr, nan_ptr, max_ptr, eps, n, BLOCK: tl.constexpr):
        offsets = tl.arange(0, BLOCK)
        mask = offsets < n
        x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        gelu = 0.5 * x * (1 + erf(x * 0.7071067811865476)) + 0.1 * tanh(x)
        scale = rsqrt(tl.sum(x * x, axis=0) / n + eps.to(tl.float32))
        tl.store(out_ptr + offsets, (gelu * scale).to(out_ptr.dtype.element_ty), mask=mask)
        tl.store(nan_ptr + offsets, isnan(x / x).to(tl.int8), mask=mask)
        tl.store(max_ptr, tl.max(tl.load(x_ptr + offsets, mask=mask, other=lowest(x_ptr.dtype.element_ty)), axis=0))

    for dtype, tolerance in ((torch.float32, 1e-5), (torch.bfloat16, 2e-2)):
        x = torch.randn(100, dtype=dtype)
        x[3] = 0.0
        out, nans, top = torch.empty_like(x), torch.empty(100, dtype=torch.int8), torch.empty(1, dtype=dtype)
        gelu_norm[(1,)](x, out, nans, top, 1e-6, 100, BLOCK=128)
        assert top.item() == x.max().item(), (top, x.max())
        xf = x.float()
        expected = (torch.nn.functional.gelu(xf) + 0.1 * torch.tanh(xf)) * torch.rsqrt(xf.pow(2).mean() + 1e-6)
        torch.testing.assert_close(out.float(), expected, atol=tolerance, rtol=tolerance)
        assert nans.tolist() == [1 if i == 3 else 0 for i in range(100)], nans
    print("ok")
''')


def test_libdevice_math_and_float_arguments_run_under_the_interpreter(tmp_path):
    script = tmp_path / "kernel.py"
    script.write_text(KERNEL)
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_without_the_backend_the_interpreter_fails_on_the_same_kernel(tmp_path):
    """The test above is not vacuous: the bare interpreter cannot run this kernel."""
    script = tmp_path / "kernel.py"
    script.write_text(KERNEL.replace("backend.setup()", "pass"))
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode != 0


BF16_KERNEL = textwrap.dedent('''
    from ladder.runner.backends.interpret import backend
    backend.setup()
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def bf16_math(x_ptr, y_ptr, out_ptr, sum_ptr, cast_ptr, BLOCK: tl.constexpr):
        offsets = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offsets)
        y = tl.load(y_ptr + offsets)
        tl.store(out_ptr + offsets, tl.where(x > y, x * y + x, (x - y) / (y * y + 1.0)))  # bf16 arithmetic throughout
        tl.store(sum_ptr, tl.sum(x, axis=0))
        tl.store(cast_ptr + offsets, (x.to(tl.float32) / 3.0).to(tl.bfloat16))

    torch.manual_seed(0)
    x, y = torch.randn(1024, dtype=torch.bfloat16), torch.randn(1024, dtype=torch.bfloat16)
    out, total, cast = torch.empty_like(x), torch.empty(1, dtype=torch.bfloat16), torch.empty_like(x)
    bf16_math[(1,)](x, y, out, total, cast, BLOCK=1024)
    expected = torch.where(x > y, x * y + x, (x - y) / (y * y + 1.0))  # torch rounds each bf16 op as the GPU does
    torch.testing.assert_close(out, expected, atol=0, rtol=1e-2)
    torch.testing.assert_close(total.float(), x.float().sum().reshape(1), atol=2e-2 * x.float().abs().sum().item() / 32, rtol=1e-2)
    assert torch.equal(cast, (x.float() / 3.0).to(torch.bfloat16))  # round to nearest even, as compiled
    print("ok")
''')


def test_bfloat16_arithmetic_and_sums_compute_on_values_not_bit_patterns(tmp_path):
    """The bare interpreter adds bfloat16 bit patterns (x + y near 1e37, tl.sum near 1e-7) and has no
    bfloat16 constants: a correct bfloat16 kernel failed its correctness check on the CPU."""
    script = tmp_path / "kernel.py"
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT)}
    script.write_text(BF16_KERNEL)
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
    script.write_text(BF16_KERNEL.replace("backend.setup()", "pass"))
    bare = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120, check=False)
    assert bare.returncode != 0  # the bare interpreter cannot even make the bfloat16 constant 1.0
