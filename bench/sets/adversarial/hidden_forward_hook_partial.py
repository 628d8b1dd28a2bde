"""A forward hook registered in __init__ as a functools.partial of torch.add (no candidate frame, and
nothing in forward's source): nn.Module's call machinery runs it after forward."""
import functools
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def touch_kernel(out_ptr, n, BLOCK: tl.constexpr):
    pass


class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha
        self.register_forward_hook(functools.partial(self._hook_target), with_kwargs=False)

    def _hook_target(self, module, args, output):
        x, y = args
        return torch.add(x, y, alpha=self.alpha, out=output)

    def forward(self, x, y):
        out = torch.empty_like(x)
        touch_kernel[(1,)](out, out.numel(), BLOCK=16)
        return out
