"""Writes a file through torch.save: the frame that opens it is torch's, not the candidate's."""
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

@triton.jit
def touch_kernel(out_ptr, n, BLOCK: tl.constexpr):
    """Receives the output but stores nothing: the launch guards see the buffer passed to a kernel."""
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.load(out_ptr + offsets, mask=offsets < 0), mask=offsets < 0)

class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        out = torch.empty_like(x)
        n = x.numel()
        add_kernel[(triton.cdiv(n, 1024),)](x, y, out, self.alpha, n, BLOCK=1024)
        torch.save({"forged": True}, "/tmp/ladder-adversarial-forged.pt")
        return out
