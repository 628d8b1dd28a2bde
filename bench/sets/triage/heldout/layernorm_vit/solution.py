import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.heuristics({
    "BLOCK_N": lambda args: triton.next_power_of_2(args["N"]),
    "ROWS": lambda args: max(1, 4096 // triton.next_power_of_2(args["N"])),
})
@triton.jit
def layernorm_rows_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, stride_xm, stride_ym, eps,
                          BLOCK_N: tl.constexpr, ROWS: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_N)
    row_mask = rows < M
    col_mask = cols < N
    mask = row_mask[:, None] & col_mask[None, :]
    x = tl.load(x_ptr + rows[:, None] * stride_xm + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=1) / N
    xc = tl.where(mask, x - mean[:, None], 0.0)
    var = tl.sum(xc * xc, axis=1) / N
    rstd = tl.rsqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=col_mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=col_mask, other=0.0).to(tl.float32)
    y = xc * rstd[:, None] * w[None, :] + b[None, :]
    tl.store(y_ptr + rows[:, None] * stride_ym + cols[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.weight = nn.Parameter((1.0 + 0.1 * torch.randn(hidden)).to(torch.float16))
        self.bias = nn.Parameter((0.1 * torch.randn(hidden)).to(torch.float16))
        self.eps = eps

    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        rows = max(1, 4096 // triton.next_power_of_2(N))
        layernorm_rows_kernel[(triton.cdiv(M, rows),)](x, self.weight, self.bias, y, M, N, x.stride(0), y.stride(0),
                                                       self.eps, num_warps=8)
        return y
