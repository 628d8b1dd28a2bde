"""Linear + sum + max + mean + two logsumexps as two streaming passes, y = x @ v + sum(b) with
v[k] = sum_n W[n, k] (every step after the feature sum acts on a size-1 dimension); round 4's two
launches, now with both streaming loops software-pipelined through cp.async.

The evidence (round 4's brief, timed on an H100 whose measured copy ceiling is 3.04 TB/s): the
five times fit a line in the bytes at 3.43 TB/s plus 34.9 us, a slope faster than the copy ceiling
itself, so the "fixed" cost is not fixed: each case runs 25-33 us past its floor, 25-26 us where
every W program walks 16-32 steps (cases 0 and 4), 30-33 us where it walks 4 and the x programs
about 6 (cases 1-3). Replayed alone on case 1 both kernels sit at 47-50% of their own floors,
classed latency-bound, and the IR says why: both streaming loops (best.py:63, best.py:107) are
"NOT pipelined, sync loads, depth 1": every step issues its eight 16-byte loads, waits for all of
them, reduces, stores, and only then issues the next, so each program's bytes in flight drop to
zero once a step, and with 2-3 programs per SM a short loop never reaches the stream rate.

Here:
- both streaming loops are ``tl.range(..., num_stages=STAGES)``: Triton turns their loads into
  cp.async copies into shared memory, STAGES - 1 tiles ahead, so a program always has two 32 kB
  tiles in flight (64 kB; three programs, 192 kB, per SM) and the loop never drains between steps;
  short loops gain most, since their prologue now issues two steps at once;
- the grids are sized again for the pipelined kernels: both passes fit three programs per SM
  (64-79 registers at 256 threads, 67 kB of shared memory each), one wave of at most 396; the x
  tile is now read from shared memory in v's layout, so each step's row sums cross two warps (one
  64-float exchange per 32 kB; registers double-buffering x instead spilled at 80 registers);
- the two loop-carried cross-warp reductions of the brief (nv.loop-carried-reduction,
  best.py:97 and best.py:127: the sum of the W partials and the last program's sum of the K
  slices) accumulate element-wise into a block and reduce once after their loops;
- unchanged: no atomics on the data (per-program W partials and per-slice row sums added in a
  fixed order; one integer ticket per row group picks the program that adds them), the W pass
  zeroes the tickets, int32 offsets inside a tile and a 64-bit row base per program.
Everything accumulates in fp32.
"""
import torch
import triton
import triton.language as tl
from torch import nn

SMS = 132
W_PROGRAMS = SMS * 3  # 256 threads, ~80 registers and 67 kB of shared memory: three per SM
X_PROGRAMS = SMS * 3  # the same for the x pass
STAGES = 3  # cp.async buffers of the streaming loops: two 32 kB tiles in flight per program
W_ROWS = 32  # W tile: 32 x 256, two loaded a step (eight 16-byte loads per thread), 32 x 256 fp32 sums
X_ROWS = 64  # x tile: 64 x 256 a step (eight 16-byte loads per thread), one row sum per row
COLS = 256
PART_ROWS = 32  # W partials added per step by the x pass (the W pass keeps to this many slices)


@triton.jit
def weight_column_sums_kernel(w_ptr, b_ptr, wpart_ptr, bpart_ptr, count_ptr, N, K, stride_wn,
                              rows_per_slice, n_groups,
                              BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, BIAS_BLOCK: tl.constexpr,
                              STAGES: tl.constexpr):
    """Column sums of one slice of W's rows over one BLOCK_K-wide column block, to
    ``wpart[slice, cols]``; the first column block also sums the slice's bias to ``bpart[slice]``."""
    col_block = tl.program_id(0)
    row_slice = tl.program_id(1)
    cols = col_block * BLOCK_K + tl.arange(0, BLOCK_K)
    in_k = cols < K
    first = row_slice * rows_per_slice
    end = tl.minimum(first + rows_per_slice, N)
    rows = tl.arange(0, BLOCK_N)
    offsets = rows[:, None] * stride_wn + cols[None, :]
    acc = tl.zeros((BLOCK_N, BLOCK_K), dtype=tl.float32)
    tile = w_ptr + first.to(tl.int64) * stride_wn
    # Pipelined: the copies of the next STAGES - 1 steps are in flight while this one is added.
    for start in tl.range(first, end, 2 * BLOCK_N, num_stages=STAGES):
        upper = tl.load(tile + offsets, mask=((start + rows) < end)[:, None] & in_k[None, :], other=0.0)
        lower = tl.load(tile + BLOCK_N * stride_wn + offsets,
                        mask=((start + BLOCK_N + rows) < end)[:, None] & in_k[None, :], other=0.0)
        acc += upper.to(tl.float32) + lower.to(tl.float32)
        tile += 2 * BLOCK_N * stride_wn
    tl.store(wpart_ptr + row_slice * K + cols, tl.sum(acc, axis=0), mask=in_k)
    if col_block == 0:
        bias = tl.zeros((BIAS_BLOCK,), dtype=tl.float32)
        for start in range(first, end, BIAS_BLOCK):
            idx = start + tl.arange(0, BIAS_BLOCK)
            bias += tl.load(b_ptr + idx, mask=idx < end, other=0.0).to(tl.float32)
        tl.store(bpart_ptr + row_slice, tl.sum(bias, axis=0))
        if row_slice == 0:  # the x pass's tickets; this kernel finishes before that one starts
            for start in range(0, n_groups, BIAS_BLOCK):
                idx = start + tl.arange(0, BIAS_BLOCK)
                tl.store(count_ptr + idx, tl.zeros((BIAS_BLOCK,), dtype=tl.int32), mask=idx < n_groups)


@triton.jit
def rows_dot_v_kernel(x_ptr, wpart_ptr, bpart_ptr, ypart_ptr, count_ptr, y_ptr, M, K, stride_xm,
                      rows_per_group, n_slices, n_row_slices,
                      BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr, PART_ROWS: tl.constexpr,
                      SUM_SLICES: tl.constexpr, SUM_ROWS: tl.constexpr, STAGES: tl.constexpr):
    """One BLOCK_K slice of v against a group of x's rows, each row's sum over the slice to
    ``ypart[slice, row]``; the group's last program adds the slices and sum(b) into y."""
    k_slice = tl.program_id(0)
    group = tl.program_id(1)
    ks = k_slice * BLOCK_K + tl.arange(0, BLOCK_K)
    in_k = ks < K
    # This slice of v: the W pass's column sums of each slice of rows, added in slice order.
    parts = tl.arange(0, PART_ROWS)
    # Added element-wise per step, reduced across warps once.
    v = tl.zeros((PART_ROWS, BLOCK_K), dtype=tl.float32)
    for p in range(0, n_row_slices, PART_ROWS):
        v += tl.load(wpart_ptr + (p + parts)[:, None] * K + ks[None, :],
                     mask=((p + parts) < n_row_slices)[:, None] & in_k[None, :], other=0.0)
    v = tl.sum(v, axis=0)[None, :]

    first = group * rows_per_group
    end = tl.minimum(first + rows_per_group, M)
    rows = tl.arange(0, BLOCK_M)
    offsets = rows[:, None] * stride_xm + ks[None, :]
    out = ypart_ptr + k_slice * M
    tile = x_ptr + first.to(tl.int64) * stride_xm
    # Pipelined as the W pass's loop is: STAGES - 1 tiles of x in flight while one is reduced.
    for start in tl.range(first, end, BLOCK_M, num_stages=STAGES):
        in_m = (start + rows) < end
        xs = tl.load(tile + offsets, mask=in_m[:, None] & in_k[None, :], other=0.0)
        tl.store(out + start + rows, tl.sum(xs.to(tl.float32) * v, axis=1), mask=in_m)
        tile += BLOCK_M * stride_xm

    # Every thread's partial sums are stored before the ticket is taken (acq_rel, GPU scope).
    tl.debug_barrier()
    if tl.atomic_add(count_ptr + group, 1, sem="acq_rel") == n_slices - 1:
        bias = tl.zeros((PART_ROWS,), dtype=tl.float32)
        for p in range(0, n_row_slices, PART_ROWS):
            bias += tl.load(bpart_ptr + p + parts, mask=(p + parts) < n_row_slices, other=0.0)
        bias_sum = tl.sum(bias, axis=0)
        slices = tl.arange(0, SUM_SLICES)
        group_rows = tl.arange(0, SUM_ROWS)
        for r in range(first, end, SUM_ROWS):
            in_m = (r + group_rows) < end
            total = tl.zeros((SUM_SLICES, SUM_ROWS), dtype=tl.float32)
            for s in range(0, n_slices, SUM_SLICES):
                # .cg: other SMs wrote these during this kernel; read them from L2, not L1
                total += tl.load(ypart_ptr + (s + slices)[:, None] * M + (r + group_rows)[None, :],
                                 mask=((s + slices) < n_slices)[:, None] & in_m[None, :], other=0.0,
                                 cache_modifier=".cg")
            row_sums = tl.sum(total, axis=0) + bias_sum  # across warps once, after the slices
            tl.store(y_ptr + r + group_rows, row_sums.to(y_ptr.dtype.element_ty), mask=in_m)


def split(programs: int, length: int, step: int, budget: int) -> tuple[int, int]:
    """(parts, length of each, whole ``step``s) so that ``programs`` times the parts stay within
    ``budget`` (one wave), with as many parts as that allows."""
    wanted = max(1, min(budget // programs, triton.cdiv(length, step)))
    per_part = triton.cdiv(triton.cdiv(length, wanted), step) * step
    return triton.cdiv(length, per_part), per_part


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, dtype=torch.float16)

    def forward(self, x):
        x = x.contiguous()
        w, b = self.linear.weight.contiguous(), self.linear.bias
        (M, K), N = x.shape, w.shape[0]

        col_blocks = triton.cdiv(K, COLS)
        row_slices, rows_per_slice = split(col_blocks, N, 2 * W_ROWS, W_PROGRAMS)
        if row_slices > PART_ROWS:  # a whole number of the x pass's combine steps
            row_slices, rows_per_slice = split(1, N, 2 * W_ROWS, row_slices // PART_ROWS * PART_ROWS)
        k_slices = col_blocks
        groups, rows_per_group = split(k_slices, M, X_ROWS // 2, X_PROGRAMS)

        wpart = torch.empty((row_slices, K), device=x.device, dtype=torch.float32)
        bpart = torch.empty((row_slices,), device=x.device, dtype=torch.float32)
        ypart = torch.empty((k_slices, M), device=x.device, dtype=torch.float32)
        tickets = torch.empty((groups,), device=x.device, dtype=torch.int32)
        y = torch.empty((M, 1), device=x.device, dtype=x.dtype)

        weight_column_sums_kernel[(col_blocks, row_slices)](
            w, b, wpart, bpart, tickets, N, K, w.stride(0), rows_per_slice, groups,
            BLOCK_N=W_ROWS, BLOCK_K=COLS, BIAS_BLOCK=1024, STAGES=STAGES, num_warps=8)
        sum_slices = min(triton.next_power_of_2(k_slices), 64)
        rows_dot_v_kernel[(k_slices, groups)](
            x, wpart, bpart, ypart, tickets, y, M, K, x.stride(0), rows_per_group, k_slices, row_slices,
            BLOCK_M=X_ROWS, BLOCK_K=COLS, PART_ROWS=PART_ROWS,
            SUM_SLICES=sum_slices, SUM_ROWS=max(32, 4096 // sum_slices), STAGES=STAGES, num_warps=8)
        return y
