import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_row(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + offs, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        y = torch.empty_like(x)
        n = x.shape[1]
        block = triton.next_power_of_2(n)
        for i in range(x.shape[0]):
            softmax_row[(1,)](x[i], y[i], n, BLOCK=block)
        return y
