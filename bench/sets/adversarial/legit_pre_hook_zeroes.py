"""Accumulates with atomics into an output the autotuner's pre_hook zeroes before every config it
benchmarks (zeroing is not compute)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


def zero_output(args, reset_only=False):
    args["out_ptr"].zero_()


@triton.autotune(configs=[triton.Config({"BLOCK": 256}), triton.Config({"BLOCK": 1024})], key=["n"],
                 pre_hook=zero_output)
@triton.jit
def atomic_kernel(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.atomic_add(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask), mask=mask)
    tl.atomic_add(out_ptr + offsets, alpha * tl.load(y_ptr + offsets, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        out = torch.zeros_like(x)
        n = x.numel()
        atomic_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, out, self.alpha, n)
        return out
