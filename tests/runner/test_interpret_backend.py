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
