"""Sum over dim 1 of (B, D1, D2) with D1 split across programs where the grid would be small.

The initial kernel gave each (128-column, batch) pair one program walking all of D1: 256 programs
for B=16, D2=2048 (under two per SM, each with one 16 KB tile in flight). Here each step still loads
a 32 x 128 tile, but where the grid is small D1 is split into slices whose fp32 partial sums a
second kernel adds; the output is written once.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK_R = 32
BLOCK_C = 128
PROGRAMS_WANTED = 132 * 8


@triton.jit
def sum_slice_kernel(x_ptr, out_ptr, D1, D2, rows_per_slice,
                     BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr, DIRECT: tl.constexpr):
    pid_c = tl.program_id(0)
    batch = tl.program_id(1)
    slice_id = tl.program_id(2)
    cols = pid_c * BLOCK_C + tl.arange(0, BLOCK_C)
    col_mask = cols < D2
    rows = tl.arange(0, BLOCK_R)
    x_batch = x_ptr + batch.to(tl.int64) * D1 * D2
    start = slice_id * rows_per_slice
    end = tl.minimum(start + rows_per_slice, D1)
    acc = tl.zeros((BLOCK_R, BLOCK_C), dtype=tl.float32)
    for r in range(start, end, BLOCK_R):
        mask = ((r + rows)[:, None] < end) & col_mask[None, :]
        acc += tl.load(x_batch + (r + rows)[:, None] * D2 + cols[None, :], mask=mask, other=0.0)
    total = tl.sum(acc, axis=0)
    if DIRECT:
        tl.store(out_ptr + batch * D2 + cols, total, mask=col_mask)
    else:
        tl.store(out_ptr + (slice_id * tl.num_programs(1) + batch) * D2 + cols, total, mask=col_mask)


@triton.jit
def add_slices_kernel(partial_ptr, y_ptr, BD2, n_slices, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < BD2
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for s in range(0, n_slices):
        acc += tl.load(partial_ptr + s * BD2 + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, acc, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        B, D1, D2 = x.shape
        y = torch.empty((B, 1, D2), device=x.device, dtype=x.dtype)
        col_tiles = triton.cdiv(D2, BLOCK_C)
        slices = max(1, min(triton.cdiv(PROGRAMS_WANTED, col_tiles * B), triton.cdiv(D1, 8 * BLOCK_R)))
        rows_per_slice = triton.cdiv(triton.cdiv(D1, slices), BLOCK_R) * BLOCK_R
        slices = triton.cdiv(D1, rows_per_slice)
        if slices == 1:
            sum_slice_kernel[(col_tiles, B, 1)](x, y, D1, D2, rows_per_slice,
                                                BLOCK_R=BLOCK_R, BLOCK_C=BLOCK_C, DIRECT=True, num_warps=4)
            return y
        partial = torch.empty((slices, B, D2), device=x.device, dtype=torch.float32)
        sum_slice_kernel[(col_tiles, B, slices)](x, partial, D1, D2, rows_per_slice,
                                                 BLOCK_R=BLOCK_R, BLOCK_C=BLOCK_C, DIRECT=False, num_warps=4)
        add_slices_kernel[(triton.cdiv(B * D2, 1024),)](partial, y, B * D2, slices, BLOCK=1024)
        return y
