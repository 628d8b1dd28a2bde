"""The deferred-finisher trick of defer_generator_finally.py with a plain finalizer: `__del__` bound by an
annotated assignment in the class body (the deferred-code rule looks at `def __del__` and plain `__del__ = ...`).
The finalizer's holder rides in a list subclass the runner keeps until after the clock."""
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


def _finish(self):
    n = self.x.numel()
    add_kernel[(triton.cdiv(n, 1024),)](self.x, self.y, self.out, self.alpha, n, BLOCK=1024)


class Finisher:
    __del__: object = _finish

    def __init__(self, x, y, out, alpha):
        self.x, self.y, self.out, self.alpha = x, y, out, alpha


class Outputs(list):
    pass


class ModelNew(nn.Module):
    def __init__(self, alpha: float):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        out = torch.zeros_like(x)
        add_kernel[(1,)](x, y, out, self.alpha, 0, BLOCK=16)
        result = Outputs([out])
        result.finisher = Finisher(x, y, out, self.alpha)
        return result
