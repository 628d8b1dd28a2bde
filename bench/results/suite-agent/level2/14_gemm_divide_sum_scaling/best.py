"""Matmul + divide + row sum + scale without the matmul: the row sum of x @ W.T is x @ (the sum of
W's rows), so y = (s / 2) * x @ v with v[k] = sum_n W[n, k].

The initial version computed the whole M x N product (2 M N K flops), wrote it to an fp32 buffer
and summed it again: for the first case 137 GFLOP and 64 MB of traffic to produce 1024 numbers. The
problem only needs each row's sum, and summing over n commutes with the product, so the work
becomes two bandwidth-bound passes that read W once and x once (the problem's byte count): a
column-sum kernel (column blocks times slices of rows, fp32 partial sums added atomically into v)
and a matrix-vector kernel (a few rows per program, K split across programs when the rows alone
do not fill the GPU, fp32 partial sums added and scaled by a small final kernel). Everything
accumulates in fp32, so the result is closer to the exact value than the fp16 product it replaces.
"""
import torch
import triton
import triton.language as tl
from torch import nn

PROGRAMS_WANTED = 132 * 8  # about eight programs per SM keep enough loads in flight
COLSUM_ROWS, COLSUM_COLS = 32, 256
MATVEC_ROWS, MATVEC_COLS = 4, 1024


@triton.jit
def column_sum_kernel(w_ptr, v_ptr, N, K, stride_wn, rows_per_slice,
                      BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_K + tl.arange(0, BLOCK_K)
    col_mask = cols < K
    first = tl.program_id(1) * rows_per_slice
    last = tl.minimum(first + rows_per_slice, N)
    rows = tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_N, BLOCK_K), dtype=tl.float32)
    for start in range(first, last, BLOCK_N):
        r = start + rows
        w = tl.load(w_ptr + r.to(tl.int64)[:, None] * stride_wn + cols[None, :],
                    mask=(r[:, None] < last) & col_mask[None, :], other=0.0)
        acc += w.to(tl.float32)
    tl.atomic_add(v_ptr + cols, tl.sum(acc, axis=0), mask=col_mask)


@triton.jit
def matvec_slice_kernel(x_ptr, v_ptr, out_ptr, M, K, stride_xm, k_per_slice, scale,
                        BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr, DIRECT: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_mask = rows < M
    slice_id = tl.program_id(1)
    start = slice_id * k_per_slice
    end = tl.minimum(start + k_per_slice, K)
    cols = tl.arange(0, BLOCK_K)
    x_rows = x_ptr + rows.to(tl.int64)[:, None] * stride_xm
    acc = tl.zeros((BLOCK_M, BLOCK_K), dtype=tl.float32)
    for k in range(start, end, BLOCK_K):
        kk = k + cols
        k_mask = kk < end
        x = tl.load(x_rows + kk[None, :], mask=row_mask[:, None] & k_mask[None, :], other=0.0)
        v = tl.load(v_ptr + kk, mask=k_mask, other=0.0)
        acc += x.to(tl.float32) * v[None, :]
    total = tl.sum(acc, axis=1)
    if DIRECT:
        tl.store(out_ptr + rows, (total * scale).to(out_ptr.dtype.element_ty), mask=row_mask)
    else:
        tl.store(out_ptr + slice_id * M + rows, total, mask=row_mask)


@triton.jit
def add_slices_scale_kernel(partial_ptr, y_ptr, M, n_slices, scale, BLOCK: tl.constexpr, SLICES: tl.constexpr):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    slices = tl.arange(0, SLICES)
    mask = (slices[:, None] < n_slices) & (rows[None, :] < M)
    partial = tl.load(partial_ptr + slices[:, None] * M + rows[None, :], mask=mask, other=0.0)
    tl.store(y_ptr + rows, (tl.sum(partial, axis=0) * scale).to(y_ptr.dtype.element_ty), mask=rows < M)


def _slices(blocks, length, step, min_steps):
    """How many slices of ``length`` (whole ``step``s, at least ``min_steps`` each) bring
    ``blocks`` programs up to the wanted count, and the length of each."""
    wanted = max(1, min(triton.cdiv(PROGRAMS_WANTED, blocks), triton.cdiv(length, min_steps * step)))
    per_slice = triton.cdiv(triton.cdiv(length, wanted), step) * step
    return triton.cdiv(length, per_slice), per_slice


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_size, scaling_factor):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(hidden_size, input_size, dtype=torch.float16))
        self.scaling_factor = scaling_factor

    def forward(self, x):
        M, K = x.shape
        w = self.weight
        N = w.shape[0]
        x = x.contiguous()
        w = w.contiguous()
        scale = self.scaling_factor / 2.0

        # A slice of W's rows may be a single step long: its partial sum costs one atomic add per
        # column, and a short W (N=2048) needs many slices to fill the GPU.
        v = torch.zeros((K,), device=x.device, dtype=torch.float32)
        col_blocks = triton.cdiv(K, COLSUM_COLS)
        n_slices, rows_per_slice = _slices(col_blocks, N, COLSUM_ROWS, min_steps=1)
        column_sum_kernel[(col_blocks, n_slices)](w, v, N, K, w.stride(0), rows_per_slice,
                                                  BLOCK_N=COLSUM_ROWS, BLOCK_K=COLSUM_COLS, num_warps=8)

        y = torch.empty((M, 1), device=x.device, dtype=x.dtype)
        row_tiles = triton.cdiv(M, MATVEC_ROWS)
        k_slices, k_per_slice = _slices(row_tiles, K, MATVEC_COLS, min_steps=4)
        if k_slices == 1:
            matvec_slice_kernel[(row_tiles, 1)](x, v, y, M, K, x.stride(0), k_per_slice, scale,
                                                BLOCK_M=MATVEC_ROWS, BLOCK_K=MATVEC_COLS, DIRECT=True, num_warps=8)
            return y
        partial = torch.empty((k_slices, M), device=x.device, dtype=torch.float32)
        matvec_slice_kernel[(row_tiles, k_slices)](x, v, partial, M, K, x.stride(0), k_per_slice, scale,
                                                   BLOCK_M=MATVEC_ROWS, BLOCK_K=MATVEC_COLS, DIRECT=False,
                                                   num_warps=8)
        add_slices_scale_kernel[(triton.cdiv(M, 256),)](partial, y, M, k_slices, scale, BLOCK=256,
                                                        SLICES=triton.next_power_of_2(k_slices))
        return y
