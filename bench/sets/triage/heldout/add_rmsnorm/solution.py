import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit(do_not_specialize=["row_stride", "n_cols"])
def fused_add_rmsnorm_kernel(x_ptr, res_ptr, w_ptr, y_ptr, row_stride, n_cols, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    offset = row * row_stride + cols
    x = tl.load(x_ptr + offset, mask=mask, other=0.0).to(tl.float32)
    r = tl.load(res_ptr + offset, mask=mask, other=0.0).to(tl.float32)
    h = x + r
    var = tl.sum(h * h, axis=0) / n_cols
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    y = h * tl.rsqrt(var + eps) * w
    tl.store(y_ptr + offset, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.weight = nn.Parameter((1.0 + 0.1 * torch.randn(hidden)).to(torch.float16))
        self.eps = eps

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        residual = residual.contiguous()
        n_rows, n_cols = x.shape
        y = torch.empty_like(x)
        block_n = triton.next_power_of_2(n_cols)
        num_warps = min(max(block_n // 256, 1), 8)
        fused_add_rmsnorm_kernel[(n_rows,)](x, residual, self.weight, y, x.stride(0), n_cols, self.eps,
                                            BLOCK_N=block_n, num_warps=num_warps)
        return y
