import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _add_rmsnorm_kernel(x_ptr, res_ptr, w_ptr, y_ptr, res_out_ptr, stride_row, n_cols, eps,
                        BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    offs = row * stride_row + cols
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    r = tl.load(res_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    h = x + r
    tl.store(res_out_ptr + offs, h.to(res_out_ptr.dtype.element_ty), mask=mask)
    rstd = tl.rsqrt(tl.sum(h * h, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs, (h * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(hidden, dtype=torch.bfloat16).uniform_(0.5, 1.5))
        self.eps = eps

    def forward(self, x, residual):
        n_rows, n_cols = x.shape
        y = torch.empty_like(x)
        res_out = torch.empty_like(x)
        block_n = triton.next_power_of_2(n_cols)
        num_warps = min(max(block_n // 512, 4), 16)
        _add_rmsnorm_kernel[(n_rows,)](x, residual, self.weight, y, res_out, x.stride(0), n_cols, self.eps,
                                       BLOCK_N=block_n, num_warps=num_warps)
        return y, res_out
