"""Two kernels with an intermediate buffer: scale y first, then add."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scale_kernel(y_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, alpha * tl.load(y_ptr + offsets, mask=mask), mask=mask)


@triton.jit
def sum_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(a_ptr + offsets, mask=mask) + tl.load(b_ptr + offsets, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        n = x.numel()
        scaled = torch.empty_like(y)
        scale_kernel[(triton.cdiv(n, 1024),)](y, scaled, self.alpha, n, BLOCK=1024)
        out = torch.empty_like(x)
        sum_kernel[(triton.cdiv(n, 1024),)](x, scaled, out, n, BLOCK=1024)
        return out
