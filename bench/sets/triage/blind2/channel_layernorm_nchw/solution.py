import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _channel_norm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_channels, hw, eps, BLOCK_C: tl.constexpr):
    pid = tl.program_id(0)
    n = pid // hw
    p = pid % hw
    offs_c = tl.arange(0, BLOCK_C)
    mask = offs_c < n_channels
    ptrs = n * n_channels * hw + offs_c * hw + p
    x = tl.load(x_ptr + ptrs, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_channels
    diff = tl.where(mask, x - mean, 0.0)
    var = tl.sum(diff * diff, axis=0) / n_channels
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + offs_c, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offs_c, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + ptrs, (diff * rstd * w + b).to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, channels, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(channels, dtype=torch.float16).uniform_(0.5, 1.5))
        self.bias = nn.Parameter(torch.empty(channels, dtype=torch.float16).uniform_(-0.5, 0.5))
        self.eps = eps

    def forward(self, x):
        batch, channels, height, width = x.shape
        y = torch.empty_like(x)
        _channel_norm_kernel[(batch * height * width,)](x, self.weight, self.bias, y, channels, height * width,
                                                        self.eps, BLOCK_C=triton.next_power_of_2(channels))
        return y
