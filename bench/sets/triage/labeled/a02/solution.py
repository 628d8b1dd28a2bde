import torch
import torch.nn as nn
import torch_npu
import triton
import triton.language as tl


@triton.jit
def norm_kernel(x_ptr, y_ptr, stride, N, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < N, other=0.0)
    mean = tl.sum(x, axis=0) / N
    xbar = tl.where(cols < N, x - mean, 0.0)
    var = tl.sum(xbar * xbar, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(y_ptr + row * stride + cols, xbar * rstd, mask=cols < N)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        rows, n = x.shape
        y = torch.empty_like(x)
        norm_kernel[(rows,)](x, y, x.stride(0), n, 1e-5, BLOCK_N=triton.next_power_of_2(n))
        return y
