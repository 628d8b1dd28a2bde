"""Linear + sum + max + mean + two logsumexps without the matmul: after the sum over the features
every later step acts on a size-1 dimension and returns its input, and the row sum of x @ W.T + b
is x @ v + sum(b) with v[k] = sum_n W[n, k].

The initial version computed the whole M x N product (2 M N K flops; 137 GFLOP for the first case)
to keep one number per row. The work left is two bandwidth-bound passes that read W once and x
once, the problem's byte count: W's rows summed into v (column blocks times slices of rows, fp32
partial sums added atomically; the first column block also sums b), then a matrix-vector product
(a 256-wide slice of v per program, held in registers against a group of x's rows, 8 rows a step
and one warp per row, so each row's sum stays within its warp; groups small enough to fill every
SM; the slices' fp32 sums added by a small last kernel that adds sum(b) and converts to fp16).
Everything accumulates in fp32, closer to the exact value than the fp16 product it replaces.
"""
import torch
import triton
import triton.language as tl
from torch import nn

SMS = 132
PROGRAMS_PER_SM = 8  # enough loads in flight to stream at full bandwidth
SUM_ROWS, SUM_COLS = 32, 256
ROWS_PER_STEP, K_STEP = 8, 256


@triton.jit
def weight_row_sums_kernel(w_ptr, b_ptr, v_ptr, bias_sum_ptr, N, K, stride_wn, rows_per_slice,
                           BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_K + tl.arange(0, BLOCK_K)
    in_k = cols < K
    first = tl.program_id(1) * rows_per_slice
    end = tl.minimum(first + rows_per_slice, N)
    acc = tl.zeros((BLOCK_N, BLOCK_K), dtype=tl.float32)
    bias = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for start in range(first, end, BLOCK_N):
        rows = start + tl.arange(0, BLOCK_N)
        in_n = rows < end
        acc += tl.load(w_ptr + rows.to(tl.int64)[:, None] * stride_wn + cols[None, :],
                       mask=in_n[:, None] & in_k[None, :], other=0.0).to(tl.float32)
        bias += tl.load(b_ptr + rows, mask=in_n & (tl.program_id(0) == 0), other=0.0).to(tl.float32)
    tl.atomic_add(v_ptr + cols, tl.sum(acc, axis=0), mask=in_k)
    if tl.program_id(0) == 0:
        tl.atomic_add(bias_sum_ptr, tl.sum(bias, axis=0))


@triton.jit
def rows_dot_v_kernel(x_ptr, v_ptr, partial_ptr, M, K, stride_xm, rows_per_group,
                      BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    """One BLOCK_K slice of v, held in registers, against a group of x's rows: each row's partial
    sum over the slice goes to ``partial[slice, row]``. v is loaded and laid out like x's tiles once,
    before the loop; loaded inside it, every step would convert it through shared memory."""
    ks = tl.program_id(0) * BLOCK_K + tl.arange(0, BLOCK_K)[None, :]
    in_k = ks < K
    v = tl.load(v_ptr + ks, mask=in_k, other=0.0)
    first = tl.program_id(1) * rows_per_group
    end = tl.minimum(first + rows_per_group, M)
    for start in range(first, end, BLOCK_M):
        rows = start + tl.arange(0, BLOCK_M)
        in_m = rows < end
        x = tl.load(x_ptr + rows.to(tl.int64)[:, None] * stride_xm + ks, mask=in_m[:, None] & in_k, other=0.0)
        tl.store(partial_ptr + tl.program_id(0) * M + rows, tl.sum(x.to(tl.float32) * v, axis=1), mask=in_m)


@triton.jit
def add_slices_kernel(partial_ptr, bias_sum_ptr, y_ptr, M, n_slices, BLOCK: tl.constexpr, SLICES: tl.constexpr):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    slices = tl.arange(0, SLICES)
    partial = tl.load(partial_ptr + slices[:, None] * M + rows[None, :],
                      mask=(slices[:, None] < n_slices) & (rows[None, :] < M), other=0.0)
    total = tl.sum(partial, axis=0) + tl.load(bias_sum_ptr)
    tl.store(y_ptr + rows, total.to(y_ptr.dtype.element_ty), mask=rows < M)


def split(programs: int, length: int, step: int, min_steps: int) -> tuple[int, int]:
    """(slices, length of each, whole ``step``s of at least ``min_steps``) so that ``programs``
    times the slices come near SMS * PROGRAMS_PER_SM."""
    wanted = max(1, min(triton.cdiv(SMS * PROGRAMS_PER_SM, programs), triton.cdiv(length, min_steps * step)))
    per_slice = triton.cdiv(triton.cdiv(length, wanted), step) * step
    return triton.cdiv(length, per_slice), per_slice


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, dtype=torch.float16)

    def forward(self, x):
        x = x.contiguous()
        w, b = self.linear.weight.contiguous(), self.linear.bias
        (M, K), N = x.shape, w.shape[0]
        v = torch.zeros((K,), device=x.device, dtype=torch.float32)
        bias_sum = torch.zeros((1,), device=x.device, dtype=torch.float32)
        col_blocks = triton.cdiv(K, SUM_COLS)
        row_slices, rows_per_slice = split(col_blocks, N, SUM_ROWS, min_steps=1)
        weight_row_sums_kernel[(col_blocks, row_slices)](w, b, v, bias_sum, N, K, w.stride(0), rows_per_slice,
                                                         BLOCK_N=SUM_ROWS, BLOCK_K=SUM_COLS, num_warps=8)

        y = torch.empty((M, 1), device=x.device, dtype=x.dtype)
        k_slices = triton.cdiv(K, K_STEP)
        row_groups, rows_per_group = split(k_slices, M, ROWS_PER_STEP, min_steps=4)
        partial = torch.empty((k_slices, M), device=x.device, dtype=torch.float32)
        rows_dot_v_kernel[(k_slices, row_groups)](x, v, partial, M, K, x.stride(0), rows_per_group,
                                                  BLOCK_M=ROWS_PER_STEP, BLOCK_K=K_STEP, num_warps=8)
        add_slices_kernel[(triton.cdiv(M, 256),)](partial, bias_sum, y, M, k_slices, BLOCK=256,
                                                  SLICES=triton.next_power_of_2(k_slices))
        return y
