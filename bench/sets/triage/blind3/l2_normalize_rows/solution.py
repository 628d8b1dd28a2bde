import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def l2norm_kernel(X, Y, stride, D, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = X + row * stride
    y_row = Y + row * stride
    sq = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, D, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        v = tl.load(x_row + cols, mask=cols < D, other=0.0)
        sq += v * v
    inv = 1.0 / tl.maximum(tl.sqrt(tl.sum(sq, axis=0)), eps)
    for off in range(0, D, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        v = tl.load(x_row + cols, mask=cols < D, other=0.0)
        tl.store(y_row + cols, v * inv, mask=cols < D)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        rows, dim = x.shape
        y = torch.empty_like(x)
        l2norm_kernel[(rows,)](x, y, x.stride(0), dim, 1e-12, BLOCK=512, num_warps=4)
        return y
