import torch
import torch.nn as nn
import torch_npu
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, XBLOCK: tl.constexpr, XBLOCK_SUB: tl.constexpr):
    base = tl.program_id(0) * XBLOCK
    offs = tl.arange(0, XBLOCK_SUB)
    for sub in range(0, XBLOCK, XBLOCK_SUB):
        idx = base + sub + offs
        mask = idx < n
        x = tl.load(x_ptr + idx, mask=mask, care_padding=False)
        y = tl.load(y_ptr + idx, mask=mask, care_padding=False)
        tl.store(out_ptr + idx, x + y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        out = torch.empty_like(x)
        n = x.numel()
        xblock = triton.cdiv(n, 40)
        add_kernel[(40,)](x, y, out, n, XBLOCK=xblock, XBLOCK_SUB=4096)
        return out
