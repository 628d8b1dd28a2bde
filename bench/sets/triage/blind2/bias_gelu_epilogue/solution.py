import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _bias_gelu_kernel(x_ptr, b_ptr, y_ptr, n_cols, stride_row, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    col_start = tl.program_id(1).to(tl.int64) * BLOCK
    cols = col_start + tl.arange(0, BLOCK).to(tl.int64)
    mask = cols < n_cols
    offs = row * stride_row + cols
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    x += tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    y = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(features, dtype=torch.float16) * 0.1)

    def forward(self, x):
        n_rows, n_cols = x.shape
        y = torch.empty_like(x)
        BLOCK = 2048
        _bias_gelu_kernel[(n_rows, triton.cdiv(n_cols, BLOCK))](x, self.bias, y, n_cols, x.stride(0),
                                                               BLOCK=BLOCK, num_warps=8)
        return y
