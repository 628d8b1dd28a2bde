"""Row softmax for rows of any length: one program per row, three passes over 1024-wide chunks
(row max, sum of exponentials, normalised write)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({'BLOCK_SIZE': 1024}, num_warps=4, num_stages=3),
        triton.Config({'BLOCK_SIZE': 512}, num_warps=4, num_stages=3),
        triton.Config({'BLOCK_SIZE': 512}, num_warps=8, num_stages=3),
        triton.Config({'BLOCK_SIZE': 1024}, num_warps=8, num_stages=3),
        triton.Config({'BLOCK_SIZE': 2048}, num_warps=4, num_stages=3),
        triton.Config({'BLOCK_SIZE': 2048}, num_warps=8, num_stages=3),
        triton.Config({'BLOCK_SIZE': 4096}, num_warps=4, num_stages=3),
        triton.Config({'BLOCK_SIZE': 4096}, num_warps=8, num_stages=3),
    ],
    key=['n_cols', 'stride_x', 'stride_y'],
)
@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
    cols = tl.arange(0, BLOCK_SIZE)

    row_max = tl.full((BLOCK_SIZE,), float("-inf"), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_SIZE):
        x = tl.load(x_row + start + cols, mask=start + cols < n_cols, other=float("-inf"))
        row_max = tl.maximum(row_max, x)
    m = tl.max(row_max, axis=0)

    denom = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_SIZE):
        x = tl.load(x_row + start + cols, mask=start + cols < n_cols, other=float("-inf"))
        denom += tl.exp(x - m)
    d = tl.sum(denom, axis=0)

    for start in range(0, n_cols, BLOCK_SIZE):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf"))
        tl.store(y_row + start + cols, tl.exp(x - m) / d, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n_rows, n_cols = x.shape
        y = torch.empty_like(x)
        softmax_kernel[(n_rows,)](x, y, n_cols, x.stride(0), y.stride(0))
        return y
