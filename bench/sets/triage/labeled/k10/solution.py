import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sumsq_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = x_ptr + row * stride
    offs = tl.arange(0, BLOCK)
    total = 0.0
    for start in range(0, n_cols, BLOCK):
        x = tl.load(base + start + offs, mask=start + offs < n_cols, other=0.0)
        total += tl.sum(x * x, axis=0)
    tl.store(out_ptr + row, total)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        rows, cols = x.shape
        out = torch.empty((rows,), device=x.device, dtype=x.dtype)
        sumsq_kernel[(rows,)](x, out, cols, x.stride(0), BLOCK=2048, num_warps=8)
        return out
