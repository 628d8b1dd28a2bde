"""Batched matmul: where every operand row holds whole 16-byte units (three of the five cases as
given, and the odd 1021 x 1023 x 1025 case once padded), both operands come through 3-D TMA
descriptors; elsewhere the cp.async kernel of the best, padded only where it must be.

The best (the agent's round 4 over the rules' 1.86x) runs the aligned cases at 55-81% of the
roofline with eager's cuBLAS 1.2x faster on all three (0.398 vs 0.499 ms at 128 x 512 x 1024 x
2048, 0.163 vs 0.201, 0.356 vs 0.427); its brief leaves four of five cases unexplained, with no
finding on the aligned ones, whose loop still carries per-thread operand pointers, A's clamped edge
rows and B's column mask on every K step. What changed:
- bmm_tma_kernel: A [batch, M, K] and B [batch, K, N] through 3-D TMA descriptors, [1, BLOCK_M,
  BLOCK_K] and [1, BLOCK_K, BLOCK_N] boxes at (matrix, row, K step): rows past M, columns past N
  and K steps past K arrive as zeros from the hardware and never cross into the next matrix, so
  the loop has no masks, clamps or per-thread pointers; C's rows are stored 16 bytes at a time
  (its width a multiple of 8, told to the kernel in 8-element units); Hopper tiles with 3-4
  TMA stages, autotuned, in GROUP_M-grouped order within each matrix;
- it runs wherever A's and B's rows and matrix strides (after the padding below) are multiples of
  8 elements on 16-byte-aligned bases, which TMA requires; the 256 x 500 x 700 case (rows of 4
  elements' multiples, memory-bound, left unpadded on purpose) keeps bmm_kernel.
Kept: the padding of an odd K or N only (the 1021 x 1023 x 1025 case: A to 1024 columns, B to
1024 x 1032, C computed 1032 wide and returned as a view), bmm_kernel as it was for the rest.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

UNIT = 8  # fp16/bf16 elements per 16 bytes


def _configs():
    """Hopper tiles (wgmma, 3-5 cp.async stages), none of which spills on sm_90 for 8- or 4-element units."""
    shapes = [(128, 256, 64, 3, 8), (256, 128, 64, 3, 8), (128, 128, 64, 4, 8), (64, 256, 64, 4, 8),
              (128, 128, 64, 4, 4), (128, 64, 64, 4, 4), (64, 128, 64, 4, 4), (64, 64, 64, 5, 4)]
    return [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8}, num_stages=s, num_warps=w)
            for m, n, k, s, w in shapes]


@triton.autotune(configs=_configs(), key=["batch", "M", "n_units", "k_units", "UNIT_K", "UNIT_N"])
@triton.heuristics({"EVEN_K": lambda a: (a["k_units"] * a["UNIT_K"]) % a["BLOCK_K"] == 0})
@triton.jit
def bmm_kernel(
    a_ptr, b_ptr, c_ptr, batch, M, n_units, k_units,
    ab_units, am_units, bb_units, bk_units, cb_units, cm_units,
    UNIT_K: tl.constexpr, UNIT_N: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    EVEN_K: tl.constexpr,
):
    N = n_units * UNIT_N
    K = k_units * UNIT_K
    pid = tl.program_id(0)
    b = tl.program_id(1).to(tl.int64)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * tiles_n
    first_m = (pid // group) * GROUP_M
    rows_in_group = min(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % rows_in_group
    pid_n = (pid % group) // rows_in_group

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    rows = tl.minimum(offs_m, M - 1)
    n_inside = offs_n[None, :] < N
    a_ptrs = a_ptr + b * (ab_units * UNIT_K) + rows[:, None] * (am_units * UNIT_K) + offs_k[None, :]
    b_ptrs = b_ptr + b * (bb_units * UNIT_N) + offs_k[:, None] * (bk_units * UNIT_N) + offs_n[None, :]
    step_b = BLOCK_K * (bk_units * UNIT_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(tl.cdiv(K, BLOCK_K)):
        if EVEN_K:
            a = tl.load(a_ptrs)
            w = tl.load(b_ptrs, mask=n_inside, other=0.0)
        else:
            left = K - k * BLOCK_K
            a = tl.load(a_ptrs, mask=offs_k[None, :] < left, other=0.0)
            w = tl.load(b_ptrs, mask=(offs_k[:, None] < left) & n_inside, other=0.0)
        acc = tl.dot(a, w, acc)
        a_ptrs += BLOCK_K
        b_ptrs += step_b
    c_ptrs = c_ptr + b * (cb_units * UNIT_N) + offs_m[:, None] * (cm_units * UNIT_N) + offs_n[None, :]
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def _set_blocks(nargs):
    """The descriptors' boxes follow the config: one matrix's BLOCK_M x BLOCK_K of A, BLOCK_K x BLOCK_N of B."""
    nargs["a_desc"].block_shape = [1, nargs["BLOCK_M"], nargs["BLOCK_K"]]
    nargs["b_desc"].block_shape = [1, nargs["BLOCK_K"], nargs["BLOCK_N"]]


def _tma_configs():
    """Hopper tiles fed by TMA (wgmma, 3-4 stages); 128x256 and 256x128 hold a 128-register accumulator per thread."""
    shapes = [(128, 256, 64, 3, 8), (256, 128, 64, 3, 8), (128, 128, 64, 4, 8), (128, 128, 64, 3, 4),
              (64, 256, 64, 4, 8)]
    return [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8}, num_stages=s, num_warps=w,
                          pre_hook=_set_blocks)
            for m, n, k, s, w in shapes]


@triton.autotune(configs=_tma_configs(), key=["batch", "M", "n_units", "k_units"])
@triton.jit
def bmm_tma_kernel(
    a_desc, b_desc, c_ptr, batch, M, n_units, k_units, cb_units, cm_units,
    UNIT: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    """C[b] = A[b] @ B[b] for one output tile of matrix b = program_id(1), operands by TMA."""
    N = n_units * UNIT
    K = k_units * UNIT
    pid = tl.program_id(0)
    b = tl.program_id(1)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * tiles_n
    first_m = (pid // group) * GROUP_M
    rows_in_group = min(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % rows_in_group
    pid_n = (pid % group) // rows_in_group
    row0 = pid_m * BLOCK_M
    col0 = pid_n * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(tl.cdiv(K, BLOCK_K)):
        a = a_desc.load([b, row0, k * BLOCK_K]).reshape(BLOCK_M, BLOCK_K)
        w = b_desc.load([b, k * BLOCK_K, col0]).reshape(BLOCK_K, BLOCK_N)
        acc = tl.dot(a, w, acc)
    rows = tl.arange(0, BLOCK_M)
    cols = col0 + tl.arange(0, BLOCK_N)
    stride_cm = cm_units * UNIT
    # int64 base of the tile, int32 offsets inside it
    c_tile = c_ptr + b.to(tl.int64) * (cb_units * UNIT) + row0.to(tl.int64) * stride_cm
    tl.store(c_tile + rows[:, None] * stride_cm + cols[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=(row0 + rows < M)[:, None] & (cols < N)[None, :])


@triton.jit
def pad_kernel(src_ptr, dst_ptr, total_rows, height, rows, cols, width_units, src_batch_stride, src_row_stride,
               WIDTH_UNIT: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """A [BLOCK_R, BLOCK_C] tile of the zero-padded copy of a (batch, rows, cols) stack into
    (batch, height, width): the source where it has data, zeros in the rows and columns past it.
    The width comes in units of WIDTH_UNIT elements so the stores of the aligned rows are vectors."""
    width = width_units * WIDTH_UNIT
    offs_r = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    offs_c = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    r64 = offs_r.to(tl.int64)
    matrix, row = r64 // height, r64 % height
    exists = offs_r < total_rows
    inside = (exists & (row < rows))[:, None] & (offs_c[None, :] < cols)
    source = src_ptr + (matrix * src_batch_stride + row * src_row_stride)[:, None] + offs_c[None, :]
    value = tl.load(source, mask=inside, other=0.0)
    tl.store(dst_ptr + r64[:, None] * width + offs_c[None, :], value,
             mask=exists[:, None] & (offs_c[None, :] < width))


def _padded(x, height, width):
    """``x`` (batch, rows, cols), rows contiguous, as a contiguous (batch, height, width) copy with
    zeros past its data (``x`` itself when nothing is to be added)."""
    batch, rows, cols = x.shape
    if (rows, cols) == (height, width):
        return x
    out = torch.empty((batch, height, width), device=x.device, dtype=x.dtype)
    block_r, block_c = 16, 256
    pad_kernel[(triton.cdiv(batch * height, block_r), triton.cdiv(width, block_c))](
        x, out, batch * height, height, rows, cols, width // _unit(width), x.stride(0), x.stride(1),
        WIDTH_UNIT=_unit(width), BLOCK_R=block_r, BLOCK_C=block_c, num_warps=4)
    return out


def _unit(n, *strides):
    """Largest of 8, 4, 2 elements dividing ``n`` and every stride, or 1."""
    return next((u for u in (8, 4, 2) if n % u == 0 and all(s % u == 0 for s in strides)), 1)


def _up8(n):
    return -(-n // 8) * 8


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        if A.stride(2) != 1:
            A = A.contiguous()
        if B.stride(2) != 1:
            B = B.contiguous()
        batch, M, K = A.shape
        N = B.shape[2]
        k_width = K if _unit(K, A.stride(1), A.stride(0)) > 1 else _up8(K)
        n_width = N if _unit(N, B.stride(1), B.stride(0)) > 1 else _up8(N)
        A = _padded(A, M, k_width)
        B = _padded(B, k_width, n_width)
        C = torch.empty((batch, M, n_width), device=A.device, dtype=A.dtype)
        unit_k = _unit(k_width, A.stride(1), A.stride(0))
        unit_n = _unit(n_width, B.stride(1), B.stride(0), C.stride(1), C.stride(0))
        if A.data_ptr() % (2 * unit_k) or B.data_ptr() % (2 * unit_n):
            unit_k = unit_n = 1
        if unit_k == unit_n == UNIT and A.data_ptr() % 16 == 0 and B.data_ptr() % 16 == 0 and C.data_ptr() % 16 == 0:
            # block shapes are set per config by _set_blocks
            a_desc = TensorDescriptor(A, [batch, M, k_width], [A.stride(0), A.stride(1), 1], [1, 64, 64])
            b_desc = TensorDescriptor(B, [batch, k_width, n_width], [B.stride(0), B.stride(1), 1], [1, 64, 64])

            def tma_grid(meta):
                return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(n_width, meta["BLOCK_N"]), batch)

            bmm_tma_kernel[tma_grid](a_desc, b_desc, C, batch, M, n_width // UNIT, k_width // UNIT,
                                     C.stride(0) // UNIT, C.stride(1) // UNIT, UNIT=UNIT)
            return C if n_width == N else C[:, :, :N]

        def grid(meta):
            return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(n_width, meta["BLOCK_N"]), batch)

        bmm_kernel[grid](A, B, C, batch, M, n_width // unit_n, k_width // unit_k,
                         A.stride(0) // unit_k, A.stride(1) // unit_k, B.stride(0) // unit_n, B.stride(1) // unit_n,
                         C.stride(0) // unit_n, C.stride(1) // unit_n, UNIT_K=unit_k, UNIT_N=unit_n)
        return C if n_width == N else C[:, :, :N]
