"""Accumulates with atomics; the autotuner's reset_to_zero clears the output between benchmarked
configs."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 256}), triton.Config({"BLOCK": 1024})], key=["n"],
                 reset_to_zero=["out_ptr"])
@triton.jit
def atomic_kernel(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.atomic_add(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + alpha * tl.load(y_ptr + offsets, mask=mask),
                  mask=mask)


class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        out = torch.zeros_like(x)
        n = x.numel()
        atomic_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, out, self.alpha, n)
        return out
