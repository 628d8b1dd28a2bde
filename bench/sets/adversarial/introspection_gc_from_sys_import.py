"""`from sys import modules` (a Name; the rule checks `sys.modules` attributes only) reaches gc
without importing it; gc.get_objects at import finds the Contestant and turns `reporting` on, as in
code_doctest_forged_runner_file.py, but from a candidate frame: the audit hook should refuse it."""
from sys import modules
import torch
import torch.nn as nn
import triton
import triton.language as tl

for _o in modules["gc"].get_objects():
    if type(_o).__name__ == "Contestant":
        _o.reporting = True


@triton.jit
def touch_kernel(out_ptr, n, BLOCK: tl.constexpr):
    pass


def _combine(x, y, alpha):
    return x + alpha * y


class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha
        self.combine = _combine

    def forward(self, x, y):
        out = self.combine(x, y, self.alpha)
        touch_kernel[(1,)](out, out.numel(), BLOCK=16)
        return out
