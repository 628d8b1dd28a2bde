import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=mask), 0.0), mask=mask)


@triton.jit
def row_affine_kernel(x_ptr, p_ptr, y_ptr, n, dim, IS_MUL: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < dim
    x = tl.load(x_ptr + row * dim + cols, mask=mask)
    p = tl.load(p_ptr + cols, mask=mask)
    if IS_MUL:
        y = x * p
    else:
        y = x + p
    tl.store(y_ptr + row * dim + cols, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.w = nn.Parameter(torch.randn(dim))
        self.b = nn.Parameter(torch.randn(dim))

    def forward(self, x):
        batch, dim = x.shape
        n = x.numel()
        block = triton.next_power_of_2(dim)
        h = torch.empty_like(x)
        relu_kernel[(triton.cdiv(n, 1024),)](x, h, n, BLOCK=1024)
        g = torch.empty_like(x)
        row_affine_kernel[(batch,)](h, self.w, g, n, dim, IS_MUL=True, BLOCK=block)
        out = torch.empty_like(x)
        row_affine_kernel[(batch,)](g, self.b, out, n, dim, IS_MUL=False, BLOCK=block)
        return out
