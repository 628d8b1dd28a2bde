"""A grid function defined beside forward, and torch.no_grad() around the launch."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + alpha * y, mask=mask)


def grid_for(n):
    return lambda meta: (triton.cdiv(n, meta["BLOCK"]),)


class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        with torch.no_grad():
            out = torch.empty_like(x)
            n = x.numel()
            add_kernel[grid_for(n)](x, y, out, self.alpha, n, BLOCK=512)
        return out
