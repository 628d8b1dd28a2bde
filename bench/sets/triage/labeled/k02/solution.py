import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def bias_tanh_kernel(x_ptr, b_ptr, y_ptr, total, features, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    col = offs % features
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + col, mask=mask, other=0.0)
    z = x + b
    e = tl.exp(2.0 * z)
    tl.store(y_ptr + offs, (e - 1.0) / (e + 1.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(features))

    def forward(self, x):
        y = torch.empty_like(x)
        total = x.numel()
        bias_tanh_kernel[(triton.cdiv(total, 1024),)](x, self.bias, y, total, x.shape[1], BLOCK=1024)
        return y
