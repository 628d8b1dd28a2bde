import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _spatial_mean(x_ptr, y_ptr, HW, C, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    n = pid // C
    c = pid % C
    base = x_ptr + n * HW * C + c
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, HW, BLOCK):
        p = start + tl.arange(0, BLOCK)
        acc += tl.load(base + p * C, mask=p < HW, other=0.0).to(tl.float32)
    tl.store(y_ptr + pid, (tl.sum(acc, axis=0) / HW).to(tl.float16))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        N, H, W, C = x.shape
        y = torch.empty((N, C), device=x.device, dtype=x.dtype)
        _spatial_mean[(N * C,)](x, y, H * W, C, BLOCK=1024, num_warps=4)
        return y
