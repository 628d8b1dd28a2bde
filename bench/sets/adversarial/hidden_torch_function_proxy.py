"""A non-Tensor proxy whose __torch_function__ is a classmethod *assigned* (not a def, which the
lazy-tensor rule looks for) is handed to torch.flatten, a view the recorder allows: the recorder calls
flatten with its own mode popped and inside `judged()`, so the proxy's handler runs torch.add seen by
neither the function-level recorder nor the dispatch-level one."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def touch_kernel(out_ptr, n, BLOCK: tl.constexpr):
    pass


def _handler(cls, func, types, args=(), kwargs=None):
    proxy = args[0]
    torch.add(proxy.x, proxy.y, alpha=proxy.alpha, out=proxy.out)
    return proxy.out


class Proxy:
    __torch_function__ = classmethod(_handler)

    def __init__(self, x, y, alpha, out):
        self.x, self.y, self.alpha, self.out = x, y, alpha, out


class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        out = torch.empty_like(x)
        out = torch.flatten(Proxy(x, y, self.alpha, out))
        touch_kernel[(1,)](out, out.numel(), BLOCK=16)
        return out
