import torch
import torch.nn as nn
import torch_npu  # noqa: F401
import triton
import triton.language as tl


@triton.jit
def _rms_norm_kernel(x_ptr, w_ptr, y_ptr, stride_row, n_cols, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_row + cols, mask=mask, other=0.0).to(tl.float32)
    x = tl.where(cols < n_cols, x, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * stride_row + cols, (x * rstd * w).to(tl.float16), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(hidden, dtype=torch.float16).uniform_(0.5, 1.5))
        self.eps = eps

    def forward(self, x):
        n_rows, n_cols = x.shape
        y = torch.empty_like(x)
        _rms_norm_kernel[(n_rows,)](x, self.weight, y, x.stride(0), n_cols, self.eps,
                                    BLOCK_N=triton.next_power_of_2(n_cols))
        return y
