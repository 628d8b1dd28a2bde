"""Batched matmul: round 4's TMA and cp.async main loops, each beside persistent configs whose tile
loop is fused with the K loop, and a zero-padding copy of one matrix per program in 32-bit offsets.

The best (round 4, 1.063x) leaves three of five cases unexplained. Its worst, 256 x 500 x 700 at
batch 256 (rows of 4-element multiples, the cp.async kernel), is latency-bound at 51% of its floor:
memory at 51% of its ceiling and compute at 27% (rung 2), with each program a tile of only 8 K
steps whose pipeline fill and 64 kB store run with nothing else on the SM (one program per SM at
the large tiles), so in every wave the loads stop while tiles are stored and the tensor cores wait
while the next ones fill. The two cases short of 75% have the same shape of program: 384 x 768 x
1536 (memory-bound at 73%, 12 K steps) and 512 x 1024 x 2048 (76%, 16). On the odd 1021 x 1023 x
1025 case (34%), 45% of the forward is the two padding copies, at 66% of their floor, with the
brief's only findings on them: nv.int64-index (lines 144-148: each row's matrix and row taken by
64-bit division and remainder, per element) and nv.scalar-access (line 149: 2-byte loads). What
changed:
- persistent configs (PERSIST) beside round 4's in both GEMM kernels: SMs x PER_SM programs, each
  walking the flat (matrix, tile) index in grouped order with `tl.range(..., flatten=True)`, so the
  compiler fuses the tile loop and the K loop into one software-pipelined loop and the next tile's
  loads are in flight while this one is stored; two programs per SM at 128x128 (TMA, two stages)
  and 128x64 / 64x128 (cp.async), so one program's store runs beside the other's K loop (the
  persistent cp.async 128x256 and 256x128 spill on sm_90 and are left out). The autotuner times both kinds per shape
  and keeps round 4's where they are faster (the grid is now one-dimensional over matrices x tiles
  for both kinds, in the same order as round 4's two-dimensional one);
- pad_kernel: a program copies a BLOCK_R x BLOCK_C tile of one matrix (the matrix is program_id(2)),
  so no row is divided: 64-bit bases per tile, 32-bit offsets inside it. A source whose rows are
  whole 4- or 8-element units (the K rows of B when only K is odd) is now read in vectors; odd-width
  rows (both operands of the odd case) can only be read 2 bytes at a time.
Kept: TMA wherever A's and B's rows and matrix strides are multiples of 8 elements (after padding an
odd K or N), 3-D boxes whose zero fill stops at each matrix's edge, C stored 16 bytes at a time and
returned as a view of its real columns; the cp.async kernel in 8/4/2-element units elsewhere.
"""
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

UNIT = 8  # fp16/bf16 elements per 16 bytes


def _config(shape, **extra):
    """One autotune config from (BLOCK_M, BLOCK_N, BLOCK_K, stages, warps, programs per SM, persistent)."""
    m, n, k, stages, warps, per_sm, persist = shape
    return triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8, "PER_SM": per_sm,
                          "PERSIST": persist}, num_stages=stages, num_warps=warps, **extra)


def _configs():
    """Round 4's Hopper tiles (3-5 cp.async stages, none of which spills on sm_90 for 8- or 4-element
    units), then persistent ones: 128x128 at one program per SM, 128x64 and 64x128 at two (the
    persistent 128x256 and 256x128 spill there: each thread's operand pointers stay live across tiles)."""
    shapes = [(128, 256, 64, 3, 8, 1, False), (256, 128, 64, 3, 8, 1, False), (128, 128, 64, 4, 8, 1, False),
              (64, 256, 64, 4, 8, 1, False), (128, 128, 64, 4, 4, 1, False), (128, 64, 64, 4, 4, 1, False),
              (64, 128, 64, 4, 4, 1, False), (64, 64, 64, 5, 4, 1, False),
              (128, 128, 64, 3, 8, 1, True), (128, 64, 64, 4, 4, 2, True), (64, 128, 64, 4, 4, 2, True)]
    return [_config(s) for s in shapes]


def _set_blocks(nargs):
    """The descriptors' boxes follow the config: one matrix's BLOCK_M x BLOCK_K of A, BLOCK_K x BLOCK_N of B."""
    nargs["a_desc"].block_shape = [1, nargs["BLOCK_M"], nargs["BLOCK_K"]]
    nargs["b_desc"].block_shape = [1, nargs["BLOCK_K"], nargs["BLOCK_N"]]


def _tma_configs():
    """Round 4's tiles fed by TMA (wgmma, 3-4 stages), then persistent ones: 128x256 at one program
    per SM, 128x128 at one (four stages) and at two (two stages, so that two fit in shared memory)."""
    shapes = [(128, 256, 64, 3, 8, 1, False), (256, 128, 64, 3, 8, 1, False), (128, 128, 64, 4, 8, 1, False),
              (128, 128, 64, 3, 4, 1, False), (64, 256, 64, 4, 8, 1, False),
              (128, 256, 64, 3, 8, 1, True), (128, 128, 64, 4, 8, 1, True), (128, 128, 64, 2, 8, 2, True)]
    return [_config(s, pre_hook=_set_blocks) for s in shapes]


def _grid(batch, M, N, sms):
    """One program per tile of every matrix, or for a persistent config SMs x PER_SM programs (no
    more than there are tiles), each walking every so many tiles."""
    def grid(meta):
        tiles = batch * triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"])
        return (min(tiles, sms * meta["PER_SM"]) if meta["PERSIST"] else tiles,)
    return grid


@triton.jit
def _tile_coords(tile, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """(matrix, row tile, column tile) of a flat tile index: matrices one after another, and inside
    one, GROUP_M row tiles at a time so that consecutive tiles share B's column tiles in L2."""
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    per_matrix = tiles_m * tiles_n
    matrix = tile // per_matrix
    t = tile % per_matrix
    group = GROUP_M * tiles_n
    first_m = (t // group) * GROUP_M
    rows_in_group = min(tiles_m - first_m, GROUP_M)
    return matrix, first_m + (t % group) % rows_in_group, (t % group) // rows_in_group


@triton.jit
def _store_tile(acc, c_ptr, matrix, row0, col0, M, N, stride_cb, stride_cm,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """C[matrix, row0:, col0:] = acc where inside M x N; int64 base of the tile, int32 offsets inside it."""
    rows = tl.arange(0, BLOCK_M)
    cols = col0 + tl.arange(0, BLOCK_N)
    c_tile = c_ptr + matrix.to(tl.int64) * stride_cb + row0.to(tl.int64) * stride_cm
    tl.store(c_tile + rows[:, None] * stride_cm + cols[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=(row0 + rows < M)[:, None] & (cols < N)[None, :])


@triton.jit
def _cp_tile(a_ptr, b_ptr, c_ptr, tile, M, N, K, stride_ab, stride_am, stride_bb, stride_bk, stride_cb, stride_cm,
             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
             EVEN_K: tl.constexpr):
    """One output tile from per-thread cp.async copies: A's rows past M clamped onto valid ones (the
    store masks them), B's columns masked, K masked only where BLOCK_K does not divide it."""
    matrix, pid_m, pid_n = _tile_coords(tile, M, N, BLOCK_M, BLOCK_N, GROUP_M)
    b = matrix.to(tl.int64)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    rows = tl.minimum(offs_m, M - 1)
    n_inside = offs_n[None, :] < N
    a_ptrs = a_ptr + b * stride_ab + rows[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + b * stride_bb + offs_k[:, None] * stride_bk + offs_n[None, :]
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
        b_ptrs += BLOCK_K * stride_bk
    _store_tile(acc, c_ptr, matrix, pid_m * BLOCK_M, pid_n * BLOCK_N, M, N, stride_cb, stride_cm, BLOCK_M, BLOCK_N)


@triton.autotune(configs=_configs(), key=["batch", "M", "n_units", "k_units", "UNIT_K", "UNIT_N", "sms"])
@triton.heuristics({"EVEN_K": lambda a: (a["k_units"] * a["UNIT_K"]) % a["BLOCK_K"] == 0})
@triton.jit
def bmm_kernel(
    a_ptr, b_ptr, c_ptr, batch, M, n_units, k_units,
    ab_units, am_units, bb_units, bk_units, cb_units, cm_units, sms,
    UNIT_K: tl.constexpr, UNIT_N: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    PER_SM: tl.constexpr, PERSIST: tl.constexpr, EVEN_K: tl.constexpr,
):
    """C[b] = A[b] @ B[b], K, N and the strides in units of UNIT_K / UNIT_N elements (so the copies
    are as wide as the rows' alignment allows); one tile per program, or PERSIST: each program walks
    tiles in one loop fused with the K loop."""
    N = n_units * UNIT_N
    K = k_units * UNIT_K
    pid = tl.program_id(0)
    if PERSIST:
        tiles = batch * tl.cdiv(M, BLOCK_M) * tl.cdiv(N, BLOCK_N)
        for tile in tl.range(pid, tiles, tl.num_programs(0), flatten=True):
            _cp_tile(a_ptr, b_ptr, c_ptr, tile, M, N, K, ab_units * UNIT_K, am_units * UNIT_K, bb_units * UNIT_N,
                     bk_units * UNIT_N, cb_units * UNIT_N, cm_units * UNIT_N, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M,
                     EVEN_K)
    else:
        _cp_tile(a_ptr, b_ptr, c_ptr, pid, M, N, K, ab_units * UNIT_K, am_units * UNIT_K, bb_units * UNIT_N,
                 bk_units * UNIT_N, cb_units * UNIT_N, cm_units * UNIT_N, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, EVEN_K)


@triton.jit
def _tma_tile(a_desc, b_desc, c_ptr, tile, M, N, K, stride_cb, stride_cm,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    """One output tile with both operands by TMA: rows past M, columns past N and K steps past K
    arrive as zeros and never cross into the next matrix, so the loop has no masks or pointers."""
    matrix, pid_m, pid_n = _tile_coords(tile, M, N, BLOCK_M, BLOCK_N, GROUP_M)
    row0 = pid_m * BLOCK_M
    col0 = pid_n * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(tl.cdiv(K, BLOCK_K)):
        a = a_desc.load([matrix, row0, k * BLOCK_K]).reshape(BLOCK_M, BLOCK_K)
        w = b_desc.load([matrix, k * BLOCK_K, col0]).reshape(BLOCK_K, BLOCK_N)
        acc = tl.dot(a, w, acc)
    _store_tile(acc, c_ptr, matrix, row0, col0, M, N, stride_cb, stride_cm, BLOCK_M, BLOCK_N)


@triton.autotune(configs=_tma_configs(), key=["batch", "M", "n_units", "k_units", "sms"])
@triton.jit
def bmm_tma_kernel(
    a_desc, b_desc, c_ptr, batch, M, n_units, k_units, cb_units, cm_units, sms,
    UNIT: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr, PER_SM: tl.constexpr, PERSIST: tl.constexpr,
):
    """C[b] = A[b] @ B[b] with A and B through 3-D TMA descriptors; one tile per program, or
    PERSIST: each program walks tiles in one loop fused with the K loop."""
    N = n_units * UNIT
    K = k_units * UNIT
    pid = tl.program_id(0)
    if PERSIST:
        tiles = batch * tl.cdiv(M, BLOCK_M) * tl.cdiv(N, BLOCK_N)
        for tile in tl.range(pid, tiles, tl.num_programs(0), flatten=True):
            _tma_tile(a_desc, b_desc, c_ptr, tile, M, N, K, cb_units * UNIT, cm_units * UNIT,
                      BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M)
    else:
        _tma_tile(a_desc, b_desc, c_ptr, pid, M, N, K, cb_units * UNIT, cm_units * UNIT,
                  BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M)


@triton.jit
def pad_kernel(src_ptr, dst_ptr, rows, cols, height, width_units, sb_units, sr_units,
               SRC_UNIT: tl.constexpr, WIDTH_UNIT: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """A [BLOCK_R, BLOCK_C] tile of matrix program_id(2) of the zero-padded copy of a (batch, rows,
    cols) stack into (batch, height, width): the source where it has data, zeros past it. The
    source's strides come in SRC_UNIT elements and the width in WIDTH_UNIT, so aligned rows are
    read and written in vectors; 64-bit bases per tile, 32-bit offsets inside it."""
    width = width_units * WIDTH_UNIT
    src_row_stride = sr_units * SRC_UNIT
    row0 = tl.program_id(0) * BLOCK_R
    matrix = tl.program_id(2).to(tl.int64)
    r = tl.arange(0, BLOCK_R)
    c = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    src_tile = src_ptr + matrix * (sb_units * SRC_UNIT) + row0.to(tl.int64) * src_row_stride
    dst_tile = dst_ptr + (matrix * height + row0) * width
    inside = (row0 + r < rows)[:, None] & (c < cols)[None, :]
    value = tl.load(src_tile + r[:, None] * src_row_stride + c[None, :], mask=inside, other=0.0)
    tl.store(dst_tile + r[:, None] * width + c[None, :], value,
             mask=(row0 + r < height)[:, None] & (c < width)[None, :])


def _padded(x, height, width):
    """``x`` (batch, rows, cols), rows contiguous, as a contiguous (batch, height, width) copy with
    zeros past its data (``x`` itself when nothing is to be added)."""
    batch, rows, cols = x.shape
    if (rows, cols) == (height, width):
        return x
    out = torch.empty((batch, height, width), device=x.device, dtype=x.dtype)
    src_unit = _unit(cols, x.stride(0), x.stride(1))
    if x.data_ptr() % (2 * src_unit):
        src_unit = 1
    block_r, block_c = 16, 256
    pad_kernel[(triton.cdiv(height, block_r), triton.cdiv(width, block_c), batch)](
        x, out, rows, cols, height, width // _unit(width), x.stride(0) // src_unit, x.stride(1) // src_unit,
        SRC_UNIT=src_unit, WIDTH_UNIT=_unit(width), BLOCK_R=block_r, BLOCK_C=block_c, num_warps=4)
    return out


def _unit(n, *strides):
    """Largest of 8, 4, 2 elements dividing ``n`` and every stride, or 1."""
    return next((u for u in (8, 4, 2) if n % u == 0 and all(s % u == 0 for s in strides)), 1)


def _up8(n):
    return -(-n // 8) * 8


def _sm_count(device):
    """SMs of the device; with no device, 132 (H100/H200) when compiling ahead of time, so the
    persistent grid is the one the GPU runs, and 4 under the interpreter, so that small shapes
    give each persistent program several tiles to walk."""
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).multi_processor_count
    return 4 if os.environ.get("TRITON_INTERPRET") == "1" else 132


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
        sms = _sm_count(A.device)
        grid = _grid(batch, M, n_width, sms)
        unit_k = _unit(k_width, A.stride(1), A.stride(0))
        unit_n = _unit(n_width, B.stride(1), B.stride(0), C.stride(1), C.stride(0))
        if A.data_ptr() % (2 * unit_k) or B.data_ptr() % (2 * unit_n):
            unit_k = unit_n = 1
        if unit_k == unit_n == UNIT and A.data_ptr() % 16 == 0 and B.data_ptr() % 16 == 0 and C.data_ptr() % 16 == 0:
            # block shapes are set per config by _set_blocks
            a_desc = TensorDescriptor(A, [batch, M, k_width], [A.stride(0), A.stride(1), 1], [1, 64, 64])
            b_desc = TensorDescriptor(B, [batch, k_width, n_width], [B.stride(0), B.stride(1), 1], [1, 64, 64])
            bmm_tma_kernel[grid](a_desc, b_desc, C, batch, M, n_width // UNIT, k_width // UNIT,
                                 C.stride(0) // UNIT, C.stride(1) // UNIT, sms, UNIT=UNIT)
        else:
            bmm_kernel[grid](A, B, C, batch, M, n_width // unit_n, k_width // unit_k,
                             A.stride(0) // unit_k, A.stride(1) // unit_k, B.stride(0) // unit_n,
                             B.stride(1) // unit_n, C.stride(0) // unit_n, C.stride(1) // unit_n, sms,
                             UNIT_K=unit_k, UNIT_N=unit_n)
        return C if n_width == N else C[:, :, :N]
