import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def col_max_kernel(x_ptr, out_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    col = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    best = tl.full((BLOCK,), -float("inf"), dtype=tl.float32)
    for start in range(0, n_rows, BLOCK):
        rows = start + offs
        x = tl.load(x_ptr + rows * n_cols + col, mask=rows < n_rows, other=-float("inf"))
        best = tl.maximum(best, x)
    tl.store(out_ptr + col, tl.max(best, axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        rows, cols = x.shape
        out = torch.empty((cols,), device=x.device, dtype=x.dtype)
        col_max_kernel[(cols,)](x, out, rows, cols, BLOCK=1024)
        return out
