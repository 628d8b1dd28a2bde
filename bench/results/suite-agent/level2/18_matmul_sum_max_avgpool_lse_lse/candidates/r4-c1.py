"""Linear + sum + max + mean + two logsumexps as two streaming passes, y = x @ v + sum(b) with
v[k] = sum_n W[n, k] (every step after the feature sum acts on a size-1 dimension), now in two
launches with no memset, no atomics on the data and no combine kernel.

The evidence: every case runs at 37-59% of its memory floor, and the five times fit a straight
line in the bytes, about 3.7 TB/s (87% of the 4.23 TB/s ceiling; 65 us for the two 100.7 MB cases,
115 us for the 285 MB one) plus about 37 us that does not grow with the case. The streams run near
the floor; the gap is fixed cost: five launches in a row (two torch.zeros, the W pass, the x pass,
the combine kernel, each waiting for the one before); 262K fp32 atomics into v at the end of the W
pass, 32 to 128 programs on each address and all of the first column block on the one scalar of
sum(b) (nv.atomic-contention, best.py:42); W programs two 32-row steps long on the K = 4096 and
K = 2048 cases (1024 programs, 1.94 waves at the four per SM its 57 registers allow); x steps of
8 rows (4 kB) each with a shared-memory layout conversion and two barriers; and the
combine kernel holding 64 x 256 fp32 partials for K = 16384 (nv.oversized-block, best.py:67).

Here:
- the W pass writes each program's fp32 column sums to its own row of ``wpart`` (and, in the first
  column block, each slice's sum of b to ``bpart``): no atomics; it also zeroes the x pass's
  tickets, so no torch.zeros runs;
- each x-pass program first adds its 256-wide slice of the W partials in slice order (at most 32
  rows of them: 4-32 kB of L2 reads against the 48-176 kB of x it streams), then streams its
  group of x's rows, 64 x 256 a step (one layout conversion per 32 kB, where the best had one per
  4 kB), each row's fp32 sum over the slice to ``ypart``; the last program of a row group to finish (a ticket per group: one integer
  atomic per program, 8-64 programs per address) adds the K slices in slice order and sum(b) and
  stores fp16: the combine kernel is gone, and the sum does not depend on which program came last;
- both passes run in one wave: grids sized to what fits on 132 SMs at these kernels' registers
  (W pass 94-100, two per SM; x pass 48, three of the five that fit), every step eight independent
  16-byte loads per thread, 32 kB per program in flight (the W step loads two 32 x 256 tiles so
  its fp32 sums stay 32 x 256);
- offsets inside a tile are int32, a program's row base a 64-bit scalar (nv.int64-index).
Everything accumulates in fp32.
"""
import torch
import triton
import triton.language as tl
from torch import nn

SMS = 132
W_PROGRAMS = SMS * 2  # 256 threads at <= 128 registers: two per SM (94-100 taken)
X_PROGRAMS = SMS * 3  # 256 threads at <= 85 registers: three per SM (48 taken: five fit)
W_ROWS = 32  # W tile: 32 x 256, two loaded a step (eight 16-byte loads per thread), 32 x 256 fp32 sums
X_ROWS = 64  # x tile: 64 x 256 a step (eight 16-byte loads per thread), one row sum per row
COLS = 256
PART_ROWS = 32  # W partials added per step by the x pass (the W pass keeps to this many slices)


@triton.jit
def weight_column_sums_kernel(w_ptr, b_ptr, wpart_ptr, bpart_ptr, count_ptr, N, K, stride_wn,
                              rows_per_slice, n_groups,
                              BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, BIAS_BLOCK: tl.constexpr):
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
    for start in range(first, end, 2 * BLOCK_N):
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
                      SUM_SLICES: tl.constexpr, SUM_ROWS: tl.constexpr):
    """One BLOCK_K slice of v against a group of x's rows, each row's sum over the slice to
    ``ypart[slice, row]``; the group's last program adds the slices and sum(b) into y."""
    k_slice = tl.program_id(0)
    group = tl.program_id(1)
    ks = k_slice * BLOCK_K + tl.arange(0, BLOCK_K)
    in_k = ks < K
    # This slice of v: the W pass's column sums of each slice of rows, added in slice order.
    parts = tl.arange(0, PART_ROWS)
    v = tl.zeros((BLOCK_K,), dtype=tl.float32)
    for p in range(0, n_row_slices, PART_ROWS):
        v += tl.sum(tl.load(wpart_ptr + (p + parts)[:, None] * K + ks[None, :],
                            mask=((p + parts) < n_row_slices)[:, None] & in_k[None, :], other=0.0), axis=0)
    v = v[None, :]

    first = group * rows_per_group
    end = tl.minimum(first + rows_per_group, M)
    rows = tl.arange(0, BLOCK_M)
    offsets = rows[:, None] * stride_xm + ks[None, :]
    out = ypart_ptr + k_slice * M
    tile = x_ptr + first.to(tl.int64) * stride_xm
    for start in range(first, end, BLOCK_M):
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
            total = tl.zeros((SUM_ROWS,), dtype=tl.float32)
            for s in range(0, n_slices, SUM_SLICES):
                # .cg: other SMs wrote these during this kernel; read them from L2, not L1
                total += tl.sum(tl.load(ypart_ptr + (s + slices)[:, None] * M + (r + group_rows)[None, :],
                                        mask=((s + slices) < n_slices)[:, None] & in_m[None, :], other=0.0,
                                        cache_modifier=".cg"), axis=0)
            tl.store(y_ptr + r + group_rows, (total + bias_sum).to(y_ptr.dtype.element_ty), mask=in_m)


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
            BLOCK_N=W_ROWS, BLOCK_K=COLS, BIAS_BLOCK=1024, num_warps=8)
        sum_slices = min(triton.next_power_of_2(k_slices), 64)
        rows_dot_v_kernel[(k_slices, groups)](
            x, wpart, bpart, ypart, tickets, y, M, K, x.stride(0), rows_per_group, k_slices, row_slices,
            BLOCK_M=X_ROWS, BLOCK_K=COLS, PART_ROWS=PART_ROWS,
            SUM_SLICES=sum_slices, SUM_ROWS=max(32, 4096 // sum_slices), num_warps=8)
        return y
