"""Sum over dim 1 of (B, D1, D2): each program owns 128 columns of one batch and accumulates a
(32, 128) tile while walking down D1, then reduces the tile."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({'BLOCK_C': 128, 'BLOCK_R': 32}, num_warps=4, num_stages=3),
        triton.Config({'BLOCK_C': 64, 'BLOCK_R': 16}, num_warps=4, num_stages=3),
        triton.Config({'BLOCK_C': 64, 'BLOCK_R': 16}, num_warps=8, num_stages=3),
        triton.Config({'BLOCK_C': 64, 'BLOCK_R': 32}, num_warps=4, num_stages=3),
        triton.Config({'BLOCK_C': 64, 'BLOCK_R': 32}, num_warps=8, num_stages=3),
        triton.Config({'BLOCK_C': 64, 'BLOCK_R': 64}, num_warps=4, num_stages=3),
        triton.Config({'BLOCK_C': 64, 'BLOCK_R': 64}, num_warps=8, num_stages=3),
        triton.Config({'BLOCK_C': 128, 'BLOCK_R': 16}, num_warps=4, num_stages=3),
        triton.Config({'BLOCK_C': 128, 'BLOCK_R': 16}, num_warps=8, num_stages=3),
        triton.Config({'BLOCK_C': 128, 'BLOCK_R': 32}, num_warps=8, num_stages=3),
        triton.Config({'BLOCK_C': 128, 'BLOCK_R': 64}, num_warps=4, num_stages=3),
        triton.Config({'BLOCK_C': 128, 'BLOCK_R': 64}, num_warps=8, num_stages=3),
        triton.Config({'BLOCK_C': 256, 'BLOCK_R': 16}, num_warps=4, num_stages=3),
        triton.Config({'BLOCK_C': 256, 'BLOCK_R': 16}, num_warps=8, num_stages=3),
        triton.Config({'BLOCK_C': 256, 'BLOCK_R': 32}, num_warps=4, num_stages=3),
        triton.Config({'BLOCK_C': 256, 'BLOCK_R': 32}, num_warps=8, num_stages=3),
        triton.Config({'BLOCK_C': 256, 'BLOCK_R': 64}, num_warps=4, num_stages=3),
        triton.Config({'BLOCK_C': 256, 'BLOCK_R': 64}, num_warps=8, num_stages=3),
    ],
    key=['D1', 'D2'],
)
@triton.jit
def sum_dim1_kernel(x_ptr, y_ptr, D1, D2, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    pid_c = tl.program_id(0)
    batch = tl.program_id(1)
    cols = pid_c * BLOCK_C + tl.arange(0, BLOCK_C)
    rows = tl.arange(0, BLOCK_R)
    x_batch = x_ptr + batch * D1 * D2
    acc = tl.zeros((BLOCK_R, BLOCK_C), dtype=tl.float32)
    for r in range(0, D1, BLOCK_R):
        mask = (r + rows[:, None] < D1) & (cols[None, :] < D2)
        acc += tl.load(x_batch + (r + rows[:, None]) * D2 + cols[None, :], mask=mask, other=0.0)
    tl.store(y_ptr + batch * D2 + cols, tl.sum(acc, axis=0), mask=cols < D2)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        B, D1, D2 = x.shape
        y = torch.empty((B, 1, D2), device=x.device, dtype=x.dtype)
        BLOCK_R, BLOCK_C = 32, 128
        sum_dim1_kernel[lambda META: (triton.cdiv(D2, META["BLOCK_C"]), B)](x, y, D1, D2)
        return y
