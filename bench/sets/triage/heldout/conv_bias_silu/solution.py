import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def bias_silu_kernel(x_ptr, b_ptr, y_ptr, numel, C, HW, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < numel
    c = (offs // HW) % C
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + c, mask=mask, other=0.0)
    v = x + b
    tl.store(y_ptr + offs, v * tl.sigmoid(v), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.bias = nn.Parameter(0.5 * torch.randn(channels))

    def forward(self, x):
        x = x.contiguous()
        N, C, H, W = x.shape
        y = torch.empty_like(x)
        numel = x.numel()
        BLOCK = 1024
        bias_silu_kernel[(triton.cdiv(numel, BLOCK),)](x, self.bias, y, numel, C, H * W, BLOCK=BLOCK)
        return y
