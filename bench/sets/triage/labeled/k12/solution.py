import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def abs_sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(tl.abs(x), axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        out = torch.zeros((), device=x.device, dtype=torch.float32)
        n = x.numel()
        abs_sum_kernel[(triton.cdiv(n, 2048),)](x, out, n, BLOCK=2048, num_warps=8)
        return out
