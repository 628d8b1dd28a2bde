"""a finalizer defined as `__del__ = _finish` (an assignment, not a def
named __del__, so the deferred-code rule misses it). The object is kept alive on the output tensor
and finishes the work (torch.add into the output) only when it is collected -- after the judge
saved the outputs. Expected: wrong values (the save comes first)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


def _finish(self):
    torch.add(self.x, self.y, alpha=self.alpha, out=self.out)


class Later:
    __del__ = _finish

    def __init__(self, x, y, alpha, out):
        self.x, self.y, self.alpha, self.out = x, y, alpha, out


@triton.jit
def zero_kernel(out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.zeros([BLOCK], dtype=tl.float32), mask=offsets < n)


class ModelNew(nn.Module):
    def __init__(self, alpha: float):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        out = torch.empty_like(x)
        n = out.numel()
        zero_kernel[(triton.cdiv(n, 1024),)](out, n, BLOCK=1024)
        out.later = Later(x, y, self.alpha, out)
        return out
