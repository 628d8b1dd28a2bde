import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def layer_norm_kernel(x_ptr, y_ptr, stride, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n_cols
    diff = tl.where(mask, x - mean, 0.0)
    var = tl.sum(diff * diff, axis=0) / n_cols
    tl.store(y_ptr + row * stride + cols, diff / tl.sqrt(var + eps), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.eps = 1e-5

    def forward(self, x):
        y = torch.empty_like(x)
        rows, cols = x.shape
        layer_norm_kernel[(rows,)](x, y, x.stride(0), cols, self.eps, BLOCK=triton.next_power_of_2(cols), num_warps=8)
        return y
