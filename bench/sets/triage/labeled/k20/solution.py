import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def max_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    valid = offs < n
    safe = tl.where(valid, offs, 0)
    a = tl.load(x_ptr + safe)
    b = tl.load(y_ptr + safe)
    tl.store(out_ptr + offs, tl.maximum(a, b), mask=valid)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        out = torch.empty_like(x)
        n = x.numel()
        max_kernel[(triton.cdiv(n, 2048),)](x, y, out, n, BLOCK=2048, num_warps=8)
        return out
