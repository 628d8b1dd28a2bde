import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def quant_rows(x_ptr, q_ptr, s_ptr, x_stride, q_stride, cols, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    m = c < cols
    x = tl.load(x_ptr + r * x_stride + c, mask=m, other=0.0).to(tl.float32)
    scale = tl.maximum(tl.max(tl.abs(x), axis=0), 1e-8) / 127.0
    q = x / scale
    q = tl.where(q >= 0, tl.floor(q + 0.5), tl.ceil(q - 0.5))
    q = tl.minimum(tl.maximum(q, -127.0), 127.0)
    tl.store(q_ptr + r * q_stride + c, q.to(tl.int8), mask=m)
    tl.store(s_ptr + r, scale)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        T, H = x.shape
        q = torch.empty((T, H), device=x.device, dtype=torch.int8)
        s = torch.empty((T, 1), device=x.device, dtype=torch.float32)
        block = triton.next_power_of_2(H)
        quant_rows[(T,)](x, q, s, x.stride(0), q.stride(0), H, BLOCK=block, num_warps=16 if block >= 8192 else 8)
        return q, s
