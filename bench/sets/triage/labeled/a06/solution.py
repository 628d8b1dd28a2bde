import torch
import torch.nn as nn
import torch_npu
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, XBLOCK: tl.constexpr):
    offs = tl.arange(0, XBLOCK)
    for start in range(tl.program_id(0) * XBLOCK, n, tl.num_programs(0) * XBLOCK):
        x = tl.load(x_ptr + start + offs)
        y = tl.load(y_ptr + start + offs)
        tl.store(out_ptr + start + offs, x + y)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        out = torch.empty_like(x)
        add_kernel[(40,)](x, y, out, x.numel(), XBLOCK=65536)
        return out
