"""A @ B.T: both operands K-major through TMA descriptors (the layout wgmma reads without a transpose)
into 128x256 / 256x128 Hopper tiles, and the tiles of a partial last wave split along K.

The best (the rules' round 1, 1.835x) runs the three aligned cases at 68-75% of the roofline where
eager's cuBLAS reaches about 100% (0.178 vs 0.241 ms at 2048 x 8192 x 4096), and the odd cases at
47-50% (1023 x 8191 x 4097 and 3333 x 5555 x 2222, where eager is 2.7-3.4x slower). Round 4's
cp.async rewrite (padding only odd K, clamped edge rows, grouped order) was refused at 0.954x on
an H100: masked per-thread loads of B's K-contiguous rows and the masked per-element stores of a
4097- or 2222-wide C still sit in or after the loop. What changed:
- A [M, K] and B [N, K] come through TMA descriptors, each read in [BLOCK, BLOCK_K] boxes as it
  lies (B's box transposed in shared memory for the dot): hardware zero fill past M, N and K, so
  no masked or clamped loads and no per-thread operand pointers; the descriptors need 16-byte row
  strides, so only where K is odd (8191, 5555) are A and B copied once into rows zero-padded to a
  multiple of 8 (their extra columns are zeros on both sides: nothing added);
- C is allocated with rows padded to a multiple of 8 elements (4097 -> 4104, 2222 -> 2224), so
  every store is 16 bytes wide, and returned as a view of its real columns;
- the tiles past the last whole wave are split along K (S = min(slots // tail, K steps // 4, 8)
  pieces) where that fills the idle SMs: 1023 x 4097 at 128x256 is 8 x 17 = 136 tiles, 132 whole
  then 4 x 8 pieces of 16 K steps; 256x128 covers it in 4 x 33 = 132 tiles, one wave, which the
  autotuner may prefer. A piece parks its fp32 partial in a workspace and
  split_tile_store_kernel adds each tile's pieces in a fixed order (deterministic, no atomics);
  SPLIT is a constexpr of the config and shape, so an unsplit kernel has no split code.
Kept: autotuned Hopper tiles in GROUP_M-grouped order, cp.async configs beside the TMA ones so
the autotuner keeps whichever is faster per size.
"""
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

UNIT = 8  # fp16 elements per 16 bytes
CHUNK = 64  # rows and columns per program of the split tiles' store
MIN_STEPS = 4  # fewest K steps a piece of a split tile gets
MAX_SPLIT = 8  # most pieces a tile is split into (the store reads them all back)


def _set_blocks(nargs):
    """The descriptors' block shapes follow the config (TMA boxes of BLOCK_M x BLOCK_K of A and
    BLOCK_N x BLOCK_K of B, both K-major)."""
    nargs["a_desc"].block_shape = [nargs["BLOCK_M"], nargs["BLOCK_K"]]
    nargs["b_desc"].block_shape = [nargs["BLOCK_N"], nargs["BLOCK_K"]]


def _configs():
    # (BLOCK_M, BLOCK_N, BLOCK_K, stages, warps, programs per SM on sm_90 from the IR's occupancy, TMA)
    shapes = [(128, 256, 64, 3, 8, 1, True), (256, 128, 64, 3, 8, 1, True), (128, 128, 64, 4, 8, 1, True),
              (128, 128, 64, 3, 8, 2, True), (128, 256, 64, 3, 8, 1, False), (128, 128, 64, 4, 8, 1, False)]
    return [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8, "PER_SM": p, "TMA": tma},
                          num_stages=s, num_warps=w, pre_hook=_set_blocks)
            for m, n, k, s, w, p, tma in shapes]


_CONFIGS = _configs()


def _schedule(M, N, K, block_m, block_n, block_k, slots):
    """(tiles, whole tiles, pieces per split tile): the tiles past the last whole wave of `slots`
    programs are split along K so that they fill the machine, when that gives each piece enough
    K steps."""
    tiles = triton.cdiv(M, block_m) * triton.cdiv(N, block_n)
    tail = tiles % slots
    if tail == 0:
        return tiles, tiles, 1
    split = min(slots // tail, triton.cdiv(K, block_k) // MIN_STEPS, MAX_SPLIT)
    if split < 2:
        return tiles, tiles, 1
    return tiles, tiles - tail, split


def _slots(sms, per_sm):
    return max(1, sms * per_sm)


def _args_schedule(a):
    return _schedule(a["M"], a["n_units"] * UNIT, a["k_units"] * UNIT, a["BLOCK_M"], a["BLOCK_N"], a["BLOCK_K"],
                     _slots(a["sms"], a["PER_SM"]))


_HEURISTICS = {
    "full_tiles": lambda a: _args_schedule(a)[1],
    "SPLIT": lambda a: _args_schedule(a)[2],
    "EVEN_K": lambda a: (a["k_units"] * UNIT) % a["BLOCK_K"] == 0,
}


def _grid(M, N, K, sms):
    def grid(meta):
        tiles, full, split = _schedule(M, N, K, meta["BLOCK_M"], meta["BLOCK_N"], meta["BLOCK_K"],
                                       _slots(sms, meta["PER_SM"]))
        return (full + (tiles - full) * split,)
    return grid


def _workspace_elements(M, N, K, sms):
    """fp32 elements of partial tiles the largest schedule of any config needs for this shape."""
    most = 1
    for c in _CONFIGS:
        bm, bn = c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"]
        tiles, full, split = _schedule(M, N, K, bm, bn, c.kwargs["BLOCK_K"], _slots(sms, c.kwargs["PER_SM"]))
        if split > 1:
            most = max(most, (tiles - full) * split * bm * bn)
    return most


@triton.jit
def _store(acc, row0, rows, cols, c_ptr, M, N, stride_c):
    """c[row0 + rows, cols] = fp16(acc); rows are offsets from row0 inside the tile, cols absolute."""
    c_tile = c_ptr + row0.to(tl.int64) * stride_c  # int64 base, int32 offsets inside the tile
    tl.store(c_tile + rows[:, None] * stride_c + cols[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=(row0 + rows < M)[:, None] & (cols < N)[None, :])


@triton.jit
def _tile_coords(tile, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """(row tile, column tile) of a linear tile index, in groups of GROUP_M row tiles so that
    consecutive programs share B tiles in L2."""
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * tiles_n
    first_m = (tile // group) * GROUP_M
    rows_in_group = min(tiles_m - first_m, GROUP_M)
    return first_m + (tile % group) % rows_in_group, (tile % group) // rows_in_group


@triton.autotune(configs=_CONFIGS, key=["M", "n_units", "k_units", "sms"])
@triton.heuristics(_HEURISTICS)
@triton.jit
def matmul_kernel(
    a_desc, b_desc, a_ptr, b_ptr, c_ptr, ws_ptr,
    M, n_units, k_units, b_rows, am_units, bn_units, cm_units, sms, full_tiles,
    UNIT: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    PER_SM: tl.constexpr, TMA: tl.constexpr, SPLIT: tl.constexpr, EVEN_K: tl.constexpr,
):
    """C = fp16(A @ B.T) for whole tiles; programs past full_tiles are pieces of the tail tiles, SPLIT
    per tile, each over its share of the K steps, parking fp32 partials. K is A's and B's (padded)
    width; N is C's padded width, a multiple of UNIT like every row stride, so every store is 16
    bytes wide; B has b_rows rows (the real N): the columns of C past it are left out of the view
    the forward returns."""
    N = n_units * UNIT
    K = k_units * UNIT
    pid = tl.program_id(0)
    steps = tl.cdiv(K, BLOCK_K)
    if SPLIT > 1:
        in_tail = pid >= full_tiles
        piece = tl.maximum(pid - full_tiles, 0)
        tile = tl.where(in_tail, full_tiles + piece // SPLIT, pid)
        k_lo = tl.where(in_tail, (piece % SPLIT) * steps // SPLIT, 0)
        k_hi = tl.where(in_tail, (piece % SPLIT + 1) * steps // SPLIT, steps)
    else:
        tile = pid
        k_lo = 0
        k_hi = steps
    pid_m, pid_n = _tile_coords(tile, M, N, BLOCK_M, BLOCK_N, GROUP_M)
    row0 = pid_m * BLOCK_M
    col0 = pid_n * BLOCK_N

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    if TMA:
        # TMA boxes: rows of A past M, rows of B past N and K steps past K arrive as zeros.
        for k in range(k_lo, k_hi):
            a = a_desc.load([row0, k * BLOCK_K])
            b = b_desc.load([col0, k * BLOCK_K])
            acc = tl.dot(a, b.T, acc)
    else:
        stride_am = am_units * UNIT
        stride_bn = bn_units * UNIT
        offs_k = tl.arange(0, BLOCK_K)
        # edge rows and columns clamped onto the last valid one (their results are masked at the
        # store); int64 tile bases, int32 offsets inside the tile
        rows = tl.minimum(row0 + tl.arange(0, BLOCK_M), M - 1) - row0
        cols = tl.minimum(col0 + tl.arange(0, BLOCK_N), b_rows - 1) - col0
        a_ptrs = (a_ptr + row0.to(tl.int64) * stride_am + k_lo * BLOCK_K
                  + (rows * stride_am)[:, None] + offs_k[None, :])
        # B's [BLOCK_K, BLOCK_N] tile read from its (N, K) rows
        b_ptrs = (b_ptr + col0.to(tl.int64) * stride_bn + k_lo * BLOCK_K
                  + (cols * stride_bn)[None, :] + offs_k[:, None])
        for k in range(k_lo, k_hi):
            if EVEN_K:
                a = tl.load(a_ptrs)
                b = tl.load(b_ptrs)
            else:
                a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
                b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
            acc = tl.dot(a, b, acc)
            a_ptrs += BLOCK_K
            b_ptrs += BLOCK_K

    rows_out = tl.arange(0, BLOCK_M)
    cols_out = col0 + tl.arange(0, BLOCK_N)
    stride_c = cm_units * UNIT
    if SPLIT > 1:
        if pid >= full_tiles:
            # a piece of a split tile: park its fp32 partial for split_tile_store_kernel
            local_m = tl.arange(0, BLOCK_M)
            local_n = tl.arange(0, BLOCK_N)
            tl.store(ws_ptr + (pid - full_tiles) * (BLOCK_M * BLOCK_N) + local_m[:, None] * BLOCK_N
                     + local_n[None, :], acc)
        else:
            _store(acc, row0, rows_out, cols_out, c_ptr, M, N, stride_c)
    else:
        _store(acc, row0, rows_out, cols_out, c_ptr, M, N, stride_c)


@triton.jit
def split_tile_store_kernel(
    ws_ptr, c_ptr, M, n_units, cm_units, full_tiles,
    UNIT: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr,
    SPLIT: tl.constexpr, CHUNK: tl.constexpr,
):
    """The split tiles, CHUNK x CHUNK at a time: the tile's SPLIT fp32 pieces added in a fixed order
    (deterministic), then the fp16 store."""
    N = n_units * UNIT
    tail = tl.program_id(0)
    ROW_PARTS: tl.constexpr = BLOCK_M // CHUNK
    r = tl.program_id(1) % ROW_PARTS * CHUNK
    c = tl.program_id(1) // ROW_PARTS * CHUNK
    pid_m, pid_n = _tile_coords(full_tiles + tail, M, N, BLOCK_M, BLOCK_N, GROUP_M)
    TILE: tl.constexpr = BLOCK_M * BLOCK_N
    local_m = r + tl.arange(0, CHUNK)
    local_n = c + tl.arange(0, CHUNK)
    at = ws_ptr + tail * SPLIT * TILE + local_m[:, None] * BLOCK_N + local_n[None, :]
    total = tl.load(at)
    for s in tl.static_range(1, SPLIT):
        total += tl.load(at + s * TILE)
    _store(total, pid_m * BLOCK_M + r, tl.arange(0, CHUNK), pid_n * BLOCK_N + local_n, c_ptr, M, N,
           cm_units * UNIT)


@triton.jit
def pad_rows_kernel(src_ptr, dst_ptr, R, K, stride_r, stride_k, padded_units,
                    BLOCK_R: tl.constexpr, BLOCK_K: tl.constexpr, UNIT: tl.constexpr):
    padded = padded_units * UNIT
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.program_id(1) * BLOCK_K + tl.arange(0, BLOCK_K)
    row_mask = rows[:, None] < R
    value = tl.load(src_ptr + rows.to(tl.int64)[:, None] * stride_r + cols[None, :] * stride_k,
                    mask=row_mask & (cols[None, :] < K), other=0.0)
    tl.store(dst_ptr + rows.to(tl.int64)[:, None] * padded + cols[None, :], value,
             mask=row_mask & (cols[None, :] < padded))


def _aligned_rows(t):
    """``t`` itself when its rows start on 16-byte boundaries and hold whole 16-byte units (what TMA
    and 16-byte cp.async need), else a copy whose rows are zero-padded to a multiple of UNIT."""
    rows, cols = t.shape
    if cols % UNIT == 0 and t.stride(0) % UNIT == 0 and t.stride(1) == 1 and t.data_ptr() % 16 == 0:
        return t
    padded = triton.cdiv(cols, UNIT) * UNIT
    out = torch.empty((rows, padded), device=t.device, dtype=t.dtype)
    pad_rows_kernel[(triton.cdiv(rows, 16), triton.cdiv(padded, 256))](
        t, out, rows, cols, t.stride(0), t.stride(1), padded // UNIT, BLOCK_R=16, BLOCK_K=256, UNIT=UNIT,
        num_warps=4)
    return out


def _sm_count(device):
    """SMs of the device; with no device, 132 (H100/H200) when compiling ahead of time, so the
    schedule is the one the GPU runs, and 4 under the interpreter, so small shapes reach the split
    tiles."""
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).multi_processor_count
    return 4 if os.environ.get("TRITON_INTERPRET") == "1" else 132


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        M, N = A.shape[0], B.shape[0]
        # K-rows zero-padded to a multiple of 8 elements where needed, for 16-byte row strides: both
        # operands gain the same zero columns, which add nothing to any product
        A, B = _aligned_rows(A), _aligned_rows(B)
        K = A.shape[1]
        n_padded = triton.cdiv(N, UNIT) * UNIT
        dev = A.device
        sms = _sm_count(dev)
        # C's rows padded to a multiple of 8 elements (16-byte stores), the padding left out of the view
        C = torch.empty((M, n_padded), device=dev, dtype=A.dtype)
        ws = torch.empty((_workspace_elements(M, n_padded, K, sms),), device=dev, dtype=torch.float32)
        # block shapes are set per config by _set_blocks
        a_desc = TensorDescriptor(A, [M, K], [A.stride(0), 1], [64, 64])
        b_desc = TensorDescriptor(B, [N, K], [B.stride(0), 1], [64, 64])
        matmul_kernel[_grid(M, n_padded, K, sms)](
            a_desc, b_desc, A, B, C, ws, M, n_padded // UNIT, K // UNIT, N, A.stride(0) // UNIT,
            B.stride(0) // UNIT, C.stride(0) // UNIT, sms, UNIT=UNIT)
        # the tile the autotuner ran (set by every Autotuner.run; a capture that bypasses it gets the first)
        config = getattr(matmul_kernel, "best_config", None) or matmul_kernel.configs[0]
        bm, bn = config.kwargs["BLOCK_M"], config.kwargs["BLOCK_N"]
        tiles, full, split = _schedule(M, n_padded, K, bm, bn, config.kwargs["BLOCK_K"],
                                       _slots(sms, config.kwargs["PER_SM"]))
        if split > 1:
            split_tile_store_kernel[(tiles - full, (bm // CHUNK) * (bn // CHUNK))](
                ws, C, M, n_padded // UNIT, C.stride(0) // UNIT, full, UNIT=UNIT,
                BLOCK_M=bm, BLOCK_N=bn, GROUP_M=config.kwargs["GROUP_M"], SPLIT=split, CHUNK=CHUNK, num_warps=4)
        return C if n_padded == N else C[:, :N]
