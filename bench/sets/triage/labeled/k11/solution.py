import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def ln_fwd(x_ptr, w_ptr, b_ptr, y_ptr, stride, N, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride
    y_row = y_ptr + row * stride
    cols = tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for off in range(0, N, BLOCK_N):
        x = tl.load(x_row + off + cols, mask=off + cols < N, other=0.0)
        acc += x
    mean = tl.sum(acc, axis=0) / N
    acc2 = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for off in range(0, N, BLOCK_N):
        x = tl.load(x_row + off + cols, mask=off + cols < N, other=0.0)
        d = tl.where(off + cols < N, x - mean, 0.0)
        acc2 += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(acc2, axis=0) / N + eps)
    for off in range(0, N, BLOCK_N):
        mask = off + cols < N
        x = tl.load(x_row + off + cols, mask=mask, other=0.0)
        w = tl.load(w_ptr + off + cols, mask=mask, other=1.0)
        b = tl.load(b_ptr + off + cols, mask=mask, other=0.0)
        tl.store(y_row + off + cols, (x - mean) * rstd * w + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim))

    def forward(self, x):
        rows, n = x.shape
        y = torch.empty_like(x)
        ln_fwd[(rows,)](x, self.weight, self.bias, y, x.stride(0), n, 1e-5, BLOCK_N=1024)
        return y
