import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _add_kernel(x_ptr, r_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    b = tl.load(r_ptr + offs, mask=mask).to(tl.float32)
    tl.store(out_ptr + offs, (a + b).to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _rmsnorm_kernel(x_ptr, w_ptr, y_ptr, stride_row, n_cols, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_row + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = tl.rsqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * stride_row + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(hidden, dtype=torch.bfloat16).uniform_(0.5, 1.5))
        self.eps = eps

    def forward(self, x, residual):
        n_rows, n_cols = x.shape
        h = torch.empty_like(x)
        n = x.numel()
        _add_kernel[(triton.cdiv(n, 4096),)](x, residual, h, n, BLOCK=4096, num_warps=8)
        y = torch.empty_like(x)
        block_n = triton.next_power_of_2(n_cols)
        _rmsnorm_kernel[(n_rows,)](h, self.weight, y, h.stride(0), n_cols, self.eps, BLOCK_N=block_n,
                                   num_warps=min(max(block_n // 512, 4), 16))
        return y, h
