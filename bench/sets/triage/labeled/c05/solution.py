import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sumsq_rows_kernel(x_ptr, out_ptr, n_rows, n_cols, stride, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.arange(0, BLOCK_C)
    acc = tl.zeros((BLOCK_R, BLOCK_C), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_C):
        mask = (rows[:, None] < n_rows) & (start + cols[None, :] < n_cols)
        x = tl.load(x_ptr + rows[:, None] * stride + start + cols[None, :], mask=mask, other=0.0)
        acc += x * x
    tl.store(out_ptr + rows, tl.sum(acc, axis=1), mask=rows < n_rows)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        rows, cols = x.shape
        out = torch.empty((rows,), device=x.device, dtype=x.dtype)
        sumsq_rows_kernel[(triton.cdiv(rows, 4),)](x, out, rows, cols, x.stride(0), BLOCK_R=4, BLOCK_C=512,
                                                    num_warps=4)
        return out
