"""Argmax over dim 1 of (B, D1, D2): programs stream whole rows, the running maxima element-wise.

The first agent round (2.009x) runs four cases at 74-88% of the roofline and B=16, D1=8192, D2=1024
at 36%, though that case moves the same 512 MiB as the first (D2=1023, 74%). Two things, from the
brief's evidence:
- nv.loop-carried-reduction (rung 3, line 37): every 16 x 128 step ended in tl.max across the tile's
  rows, a cross-warp reduction through shared memory with a barrier, so a program could not have
  its next load in flight while it compared; here each step only compares element-wise into
  running (max, first index) tiles, and the rows are reduced once after the loop;
- each program read a 512-byte column slice of rows 4 KB apart, and D2 = 1024 is the one case whose
  row stride is a power of two: the slices that run together all fall on the same few address bits,
  which is where the DRAM channels and L2 slices are chosen (the other cases' strides are odd).
  Here a program's step is up to 1024 whole columns of a few consecutive rows (16 KB, contiguous
  where the row is), so every step streams one contiguous block whatever the stride.
D1 is still split across programs where the grid would be small (slices merged by a second kernel,
lower slices winning ties), and ties keep the first index, as torch.argmax does: within a row lane
a later row replaces the running maximum only when strictly greater, and across lanes and slices the
smallest index among the maxima is taken.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

STEP_ELEMENTS = 4096  # one step: BLOCK_R rows x BLOCK_C columns, 16 KB of fp32
MAX_BLOCK_C = 1024
PROGRAMS_WANTED = 132 * 8
INT_MAX = tl.constexpr(2**31 - 1)


@triton.jit
def argmax_slice_kernel(x_ptr, best_ptr, idx_ptr, out_ptr, D1, D2, rows_per_slice,
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
    run_best = tl.full((BLOCK_R, BLOCK_C), float("-inf"), dtype=tl.float32)
    run_idx = tl.zeros((BLOCK_R, BLOCK_C), dtype=tl.int32) + start
    for r in range(start, end, BLOCK_R):
        row = r + rows
        x = tl.load(x_batch + row[:, None] * D2 + cols[None, :], mask=(row[:, None] < end) & col_mask[None, :],
                    other=float("-inf"))
        better = x > run_best
        run_best = tl.where(better, x, run_best)
        run_idx = tl.where(better, row[:, None], run_idx)
    best = tl.max(run_best, axis=0)
    best_idx = tl.min(tl.where(run_best == best[None, :], run_idx, INT_MAX), axis=0)
    if DIRECT:
        tl.store(out_ptr + batch * D2 + cols, best_idx.to(tl.int64), mask=col_mask)
    else:
        partial = (slice_id * tl.num_programs(1) + batch) * D2 + cols
        tl.store(best_ptr + partial, best, mask=col_mask)
        tl.store(idx_ptr + partial, best_idx, mask=col_mask)


@triton.jit
def merge_slices_kernel(best_ptr, idx_ptr, out_ptr, B, D2, n_slices, BLOCK_C: tl.constexpr):
    pid_c = tl.program_id(0)
    batch = tl.program_id(1)
    cols = pid_c * BLOCK_C + tl.arange(0, BLOCK_C)
    col_mask = cols < D2
    best = tl.full((BLOCK_C,), float("-inf"), dtype=tl.float32)
    best_idx = tl.zeros((BLOCK_C,), dtype=tl.int32)
    for s in range(0, n_slices):
        partial = (s * B + batch) * D2 + cols
        value = tl.load(best_ptr + partial, mask=col_mask, other=float("-inf"))
        index = tl.load(idx_ptr + partial, mask=col_mask, other=0)
        better = value > best  # slices in order: a later slice wins only when strictly greater
        best = tl.where(better, value, best)
        best_idx = tl.where(better, index, best_idx)
    tl.store(out_ptr + batch * D2 + cols, best_idx.to(tl.int64), mask=col_mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        B, D1, D2 = x.shape
        y = torch.empty((B, D2), device=x.device, dtype=torch.int64)
        block_c = min(triton.next_power_of_2(D2), MAX_BLOCK_C)
        block_r = max(1, STEP_ELEMENTS // block_c)
        col_tiles = triton.cdiv(D2, block_c)
        slices = max(1, min(triton.cdiv(PROGRAMS_WANTED, col_tiles * B), triton.cdiv(D1, 8 * block_r)))
        rows_per_slice = triton.cdiv(triton.cdiv(D1, slices), block_r) * block_r
        slices = triton.cdiv(D1, rows_per_slice)
        if slices == 1:
            argmax_slice_kernel[(col_tiles, B, 1)](x, x, y, y, D1, D2, rows_per_slice,
                                                   BLOCK_R=block_r, BLOCK_C=block_c, DIRECT=True, num_warps=8)
            return y
        best = torch.empty((slices, B, D2), device=x.device, dtype=torch.float32)
        best_idx = torch.empty((slices, B, D2), device=x.device, dtype=torch.int32)
        argmax_slice_kernel[(col_tiles, B, slices)](x, best, best_idx, y, D1, D2, rows_per_slice,
                                                    BLOCK_R=block_r, BLOCK_C=block_c, DIRECT=False, num_warps=8)
        merge_slices_kernel[(triton.cdiv(D2, 128), B)](best, best_idx, y, B, D2, slices, BLOCK_C=128)
        return y
