"""torch compute inside a @triton.jit body (never statically checked: kernel
bodies are excluded from the hot path). Under the interpreter the body is Python, run while inside
InterpretedFunction.run; the call is laundered through contextlib so the immediate caller of the
torch op is a stdlib frame."""
import contextlib
import torch
import torch.nn as nn
import triton
import triton.language as tl

STASH = []


@triton.jit
def cheat_kernel(out_ptr, n, BLOCK: tl.constexpr):
    with contextlib.ExitStack() as stack:
        stack.callback(STASH[0], *STASH[1], **STASH[2])


class ModelNew(nn.Module):
    def __init__(self, alpha: float):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        out = torch.empty_like(x)
        STASH[:] = [torch.add, (x, y), {"alpha": self.alpha, "out": out}]
        cheat_kernel[(1,)](out, x.numel(), BLOCK=16)
        return out
