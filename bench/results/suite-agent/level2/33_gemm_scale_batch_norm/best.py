"""Linear + scale + training-mode BatchNorm: the GEMM's last partial wave split along K, each
feature's batch statistics combined once inside the GEMM, and a one-FMA normalise pass.

Round 2 runs cases 0-1 at 60-75% of the roofline but 8192 x 2048 -> 2048, 1001 x 7000 -> 5000 and the
3000 cube at 35%, 35% and 30%, the last two below eager (0.258 vs 0.168 ms, 0.232 vs 0.155 ms). The
brief's split of the 3000 cube puts 86% of the forward in linear_scale_stats_kernel (launched at
line 186, 0.199 ms: 271 TFLOPS, 35% of the measured 771; the split's "7% of its floor" counts 0.85
GFLOP for it, not the 54 GFLOP it runs) and 14% in batch_norm_apply_kernel (line 193). The IR of
that case (`ladder ir --facts --case 4` on the best) and the findings say where that goes:
- the launch: 128x256 tiles give 288 programs = 2.18 waves on 132 SMs at one program per SM, so the
  third wave runs 24 tiles as long as a full one while 108 SMs idle (3 waves of time for 2.18 of
  work); 1001 x 5000 has 160 such tiles, 1.21 waves (2 waves of time); 128x128 tiles only move the
  tail (4.36 and 2.42 waves);
- the two largest configs spill in the epilogue (2148 B and 1364 B at best.py:83, bias and scale on
  the whole 128x256 or 4-warp 128x128 fp32 tile, with the statistics' masks), and the operand copies
  are masked cp.async in the loop (best.py:73-74) since 3000 and 7000 are not multiples of BLOCK_K;
- nv.redundant-global-traffic (line 129) and nv.loop-carried-reduction (lines 122, 132): every
  64-row program of the normalise pass re-reads all statistics slices of its 64 features, in two
  passes with a cross-warp sum per step: (M/64)^2 x 64 x 12 B per feature block, 400 MB of L2 reads
  on the 8192-row case; nv.int64-index (lines 64, 141).

What changed:
- the tiles past the last whole wave are split along K (up to 8 pieces of at least 4 K steps) so the
  tail fills the machine: the 3000 cube runs 264 whole 128x256 tiles and 24 x 5 pieces of 9-10 K
  steps (about 2.2 waves of time instead of 3), 1001 x 5000 runs 132 whole tiles and 28 x 4 pieces
  (about 1.25 instead of 2); a piece parks its fp32 partial in a workspace (15 MB, L2) and counts in
  (bar.sync, then an acq_rel atomic); the last to arrive resets the counter and runs the epilogue
  from the workspace, the pieces added in a fixed order, 64 columns at a time. Cases 0-2 (1.94,
  1.94 and 3.88 waves) split nothing and compile without that path (SPLIT is a constexpr);
- the whole-tile epilogue walks the accumulator in 64-column slices (reshape/permute/split), and
  the statistics are those of v = x @ W.T, taken without masks (rows past M are zero: TMA zero fill,
  or zeroed once after the pointer loop; the zero rows' share of M2 is taken off), the affine
  h = (v + b) * s carried over at the finalisation: no config spills (was 2148 B), h stores stay
  128-bit (masks on the 8-padded row width);
- the operands can come through TMA descriptors (hardware zero fill at the M, N and K edges: no
  masked or clamped loads, no per-thread pointers); the round-2 cp.async loop stays as configs
  beside them so the tuner keeps whichever is faster; a 3-stage 128x128 config runs two programs
  per SM (128 registers), one's epilogue under the other's main loop;
- each feature block's statistics are combined once: the tile that completes its column block (an
  acq_rel counter per block, the last arrival) merges the block's 64-row slices (mean, M2) in one
  shifted pass (slice means minus slice 0's, Chan's terms accumulated element-wise in a
  [16, BLOCK_N] block and reduced once) and writes a = gamma / sqrt(var + eps), c = beta - mean * a;
  the normalise pass is y = h * a + c on 64 x 128 blocks (one read of h, one write of y, int32
  offsets from an int64 row base): no statistics re-read per row block, no reduction in a loop;
- x and W are copied (rows zero-padded to a multiple of 8) only when their rows are not 16-byte
  aligned (odd K, the test case's 50); h's rows are padded to a multiple of 8.

Kept from round 2: statistics from the fp32 accumulator per 64-row slice (mean and M2, no
E[h^2] - E[h]^2), autotuned Hopper tiles in GROUP_M-grouped order, K and row strides in 8-element
units, unmasked K steps where BLOCK_K divides K on the pointer path, edge rows and columns clamped.
"""
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

UNIT = 8  # fp16 elements per 16 bytes
STATS_ROWS = 64  # rows per statistics slice: every config's BLOCK_M is a multiple of it
CHUNK = 64  # columns per step of a split tile's epilogue
MIN_STEPS = 4  # fewest K steps a piece of a split tile gets
MAX_SPLIT = 8  # most pieces a tile is split into
COUNTERS = 1024  # split-tile counters (a split tile's index among the tail tiles < slots)


def _set_blocks(nargs):
    """The descriptors' block shapes follow the config (TMA boxes of BLOCK_M x BLOCK_K, BLOCK_N x BLOCK_K)."""
    nargs["x_desc"].block_shape = [nargs["BLOCK_M"], nargs["BLOCK_K"]]
    nargs["w_desc"].block_shape = [nargs["BLOCK_N"], nargs["BLOCK_K"]]


def _configs():
    # (BLOCK_M, BLOCK_N, BLOCK_K, stages, warps, programs per SM on sm_90 (the IR's occupancy; the
    # 3-stage 128x128 fits two at 128 registers where nothing splits, one beside the split path), TMA)
    shapes = [(128, 256, 64, 3, 8, 1, True), (128, 128, 64, 4, 8, 1, True), (128, 128, 64, 3, 8, 2, True),
              (64, 128, 64, 4, 4, 2, True), (128, 256, 64, 3, 8, 1, False), (128, 128, 64, 4, 8, 1, False)]
    return [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8, "PER_SM": p, "TMA": tma},
                          num_stages=s, num_warps=w, pre_hook=_set_blocks)
            for m, n, k, s, w, p, tma in shapes]


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
    return max(1, min(sms * per_sm, COUNTERS))


def _args_schedule(a):
    return _schedule(a["M"], a["N"], a["k_units"] * UNIT, a["BLOCK_M"], a["BLOCK_N"], a["BLOCK_K"],
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
    for c in _configs():
        bm, bn = c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"]
        tiles, full, split = _schedule(M, N, K, bm, bn, c.kwargs["BLOCK_K"], _slots(sms, c.kwargs["PER_SM"]))
        if split > 1:
            most = max(most, (tiles - full) * split * bm * bn)
    return most


@triton.jit
def _finish_columns(v, pid_m, cols, b_ptr, s_ptr, h_ptr, mean_ptr, m2_ptr, M, N, stride_h,
                    BLOCK_M: tl.constexpr, STATS_ROWS: tl.constexpr):
    """The mean and M2 of v = x @ W.T per 64-row slice for these columns, stored at (slice, column)
    of the statistics arrays, then h = (v + b) * scale stored in fp16. v's rows past M are zero (TMA
    zero fill, or zeroed after the pointer loop), so the statistics need no mask: sums over all 64
    rows, the zero rows' share of M2 taken off. They are v's, not h's: h is an affine map of v per
    feature, so the finalisation carries the combined mean and variance over to h. Columns from N
    up to the padded row width (stride_h) hold b = s = 0 and are stored too, so every mask is
    constant over 8 columns (16-byte stores)."""
    pad_mask = cols < stride_h
    SLICES: tl.constexpr = BLOCK_M // STATS_ROWS
    WIDTH: tl.constexpr = v.shape[1]
    slices = pid_m * SLICES + tl.arange(0, SLICES)
    counts = tl.minimum(tl.maximum(M - slices * STATS_ROWS, 0), STATS_ROWS).to(tl.float32)
    value = tl.reshape(v, (SLICES, STATS_ROWS, WIDTH))
    mean = tl.sum(value, axis=1) / tl.maximum(counts, 1.0)[:, None]
    diff = value - mean[:, None, :]
    m2 = tl.sum(diff * diff, axis=1) - (STATS_ROWS - counts)[:, None] * mean * mean
    at = slices[:, None] * stride_h + cols[None, :]
    kept = (counts > 0)[:, None] & pad_mask[None, :]
    tl.store(mean_ptr + at, mean, mask=kept)
    tl.store(m2_ptr + at, tl.maximum(m2, 0.0), mask=kept)

    n_mask = cols < N
    bias = tl.load(b_ptr + cols, mask=n_mask, other=0.0).to(tl.float32)
    scale = tl.load(s_ptr + cols, mask=n_mask, other=0.0).to(tl.float32)
    h = ((v + bias[None, :]) * scale[None, :]).to(h_ptr.dtype.element_ty)
    rows = tl.arange(0, BLOCK_M)
    row0 = pid_m * BLOCK_M
    h_tile = h_ptr + row0.to(tl.int64) * stride_h  # int64 base, int32 offsets inside the tile
    tl.store(h_tile + rows[:, None] * stride_h + cols[None, :], h,
             mask=(row0 + rows < M)[:, None] & pad_mask[None, :])


@triton.jit
def _halves(v, ROWS: tl.constexpr, COLS: tl.constexpr):
    """Columns [0, COLS / 2) and [COLS / 2, COLS) of v."""
    return tl.split(tl.permute(tl.reshape(v, (ROWS, 2, COLS // 2)), (0, 2, 1)))


@triton.jit
def _finalize(mean_ptr, m2_ptr, b_ptr, s_ptr, g_ptr, beta_ptr, ac_ptr, M, N, stride_s, eps, col0,
              WIDTH: tl.constexpr, STATS_ROWS: tl.constexpr, STEP: tl.constexpr):
    """Batch mean and biased variance of v = x @ W.T for these WIDTH features from all their 64-row
    slices (one pass: slice means shifted by slice 0's, element-wise accumulation, one reduction),
    carried over to h = (v + b) * s and written as the normalise pass's a = gamma / sqrt(var + eps)
    and c = beta - mean * a."""
    cols = col0 + tl.arange(0, WIDTH)
    col_mask = cols < N
    pad_mask = cols < stride_s  # the statistics and a, c rows are stride_s wide (16-byte masks)
    n_slices = tl.cdiv(M, STATS_ROWS)
    shift = tl.load(mean_ptr + cols, mask=pad_mask, other=0.0, cache_modifier=".cg")
    s1 = tl.zeros((STEP, WIDTH), dtype=tl.float32)
    s2 = tl.zeros((STEP, WIDTH), dtype=tl.float32)
    for first in range(0, n_slices, STEP):
        slices = first + tl.arange(0, STEP)
        both = (slices < n_slices)[:, None] & pad_mask[None, :]
        counts = tl.minimum(tl.maximum(M - slices * STATS_ROWS, 0), STATS_ROWS).to(tl.float32)
        at = slices[:, None] * stride_s + cols[None, :]
        means = tl.load(mean_ptr + at, mask=both, other=0.0, cache_modifier=".cg")
        m2s = tl.load(m2_ptr + at, mask=both, other=0.0, cache_modifier=".cg")
        d = tl.where(both, means - shift[None, :], 0.0)
        s1 += counts[:, None] * d
        s2 += m2s + counts[:, None] * d * d
    t1 = tl.sum(s1, axis=0) / M
    t2 = tl.sum(s2, axis=0) / M
    bias = tl.load(b_ptr + cols, mask=col_mask, other=0.0).to(tl.float32)
    scale = tl.load(s_ptr + cols, mask=col_mask, other=0.0).to(tl.float32)
    mean = (shift + t1 + bias) * scale  # h = (v + b) * s: the mean and variance of h from v's
    var = tl.maximum(t2 - t1 * t1, 0.0) * scale * scale
    gamma = tl.load(g_ptr + cols, mask=col_mask, other=0.0).to(tl.float32)
    beta = tl.load(beta_ptr + cols, mask=col_mask, other=0.0).to(tl.float32)
    a = gamma / tl.sqrt(var + eps)
    tl.store(ac_ptr + cols, a, mask=pad_mask)
    tl.store(ac_ptr + stride_s + cols, beta - mean * a, mask=pad_mask)


@triton.autotune(configs=_configs(), key=["M", "N", "k_units", "sms"])
@triton.heuristics(_HEURISTICS)
@triton.jit
def linear_scale_stats_kernel(
    x_desc, w_desc, x_ptr, w_ptr, b_ptr, s_ptr, g_ptr, beta_ptr, h_ptr, mean_ptr, m2_ptr, ac_ptr, ws_ptr, cnt_ptr,
    M, N, k_units, xm_units, wn_units, h_units, eps, sms, full_tiles,
    UNIT: tl.constexpr, STATS_ROWS: tl.constexpr, CHUNK: tl.constexpr, COL_COUNTERS: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    PER_SM: tl.constexpr, TMA: tl.constexpr, SPLIT: tl.constexpr, EVEN_K: tl.constexpr,
):
    K = k_units * UNIT
    stride_h = h_units * UNIT
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
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * tiles_n
    first_m = (tile // group) * GROUP_M
    rows_in_group = min(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (tile % group) % rows_in_group
    pid_n = (tile % group) // rows_in_group

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    if TMA:
        # TMA boxes: rows past M, columns past N and K steps past K arrive as zeros.
        off_m = pid_m * BLOCK_M
        off_n = pid_n * BLOCK_N
        for k in range(k_lo, k_hi):
            a = x_desc.load([off_m, k * BLOCK_K])
            b = w_desc.load([off_n, k * BLOCK_K])
            acc = tl.dot(a, b.T, acc)
    else:
        stride_xm = xm_units * UNIT
        stride_wn = wn_units * UNIT
        offs_k = tl.arange(0, BLOCK_K)
        row0 = pid_m * BLOCK_M
        col0 = pid_n * BLOCK_N
        # edge rows and columns clamped onto the last valid one (zeroed / masked after the loop);
        # int64 tile bases, int32 offsets inside the tile
        rows = tl.minimum(row0 + tl.arange(0, BLOCK_M), M - 1) - row0
        cols = tl.minimum(col0 + tl.arange(0, BLOCK_N), N - 1) - col0
        x_ptrs = (x_ptr + row0.to(tl.int64) * stride_xm + k_lo * BLOCK_K
                  + (rows * stride_xm)[:, None] + offs_k[None, :])
        w_ptrs = (w_ptr + col0.to(tl.int64) * stride_wn + k_lo * BLOCK_K
                  + offs_k[:, None] + (cols * stride_wn)[None, :])
        for k in range(k_lo, k_hi):
            if EVEN_K:
                a = tl.load(x_ptrs)
                b = tl.load(w_ptrs)
            else:
                left = K - k * BLOCK_K
                a = tl.load(x_ptrs, mask=offs_k[None, :] < left, other=0.0)
                b = tl.load(w_ptrs, mask=offs_k[:, None] < left, other=0.0)
            acc = tl.dot(a, b, acc)
            x_ptrs += BLOCK_K
            w_ptrs += BLOCK_K
        # the clamped edge rows repeat row M - 1: zero them, as TMA does, for the statistics
        acc = tl.where((row0 + tl.arange(0, BLOCK_M) < M)[:, None], acc, 0.0)

    tail = False
    if SPLIT > 1:
        tail = pid >= full_tiles
    if tail:
        # A piece of a split tile: park the partial, count in; the last piece runs the epilogue.
        piece = pid - full_tiles
        r = tl.arange(0, BLOCK_M)
        c = tl.arange(0, BLOCK_N)
        tl.store(ws_ptr + piece * (BLOCK_M * BLOCK_N) + r[:, None] * BLOCK_N + c[None, :], acc)
        tl.debug_barrier()  # every thread's partial is written before the release below
        arrived = tl.atomic_add(cnt_ptr + piece // SPLIT, 1, sem="acq_rel", scope="gpu")
        finished = arrived == SPLIT - 1
        if finished:
            tl.store(cnt_ptr + piece // SPLIT, 0)
            first = piece // SPLIT * SPLIT
            cc = tl.arange(0, CHUNK)
            for chunk in range(0, tl.cdiv(tl.minimum(N - pid_n * BLOCK_N, BLOCK_N), CHUNK)):
                at = ws_ptr + first * (BLOCK_M * BLOCK_N) + r[:, None] * BLOCK_N + (chunk * CHUNK + cc)[None, :]
                part = tl.load(at, cache_modifier=".cg")
                for s in tl.static_range(1, SPLIT):
                    part += tl.load(at + s * (BLOCK_M * BLOCK_N), cache_modifier=".cg")
                _finish_columns(part, pid_m, pid_n * BLOCK_N + chunk * CHUNK + cc, b_ptr, s_ptr, h_ptr,
                                mean_ptr, m2_ptr, M, N, stride_h, BLOCK_M, STATS_ROWS)
    else:
        finished = pid >= 0
        # Whole tile: the epilogue on 64-column slices of the accumulator (a quarter or a half of
        # it at a time), so the bias, scale, deviations and fp16 values of one slice are live at once.
        cols0 = pid_n * BLOCK_N + tl.arange(0, CHUNK)
        lo, hi = _halves(acc, BLOCK_M, BLOCK_N)
        if BLOCK_N == 2 * CHUNK:
            _finish_columns(lo, pid_m, cols0, b_ptr, s_ptr, h_ptr, mean_ptr, m2_ptr, M, N, stride_h,
                            BLOCK_M, STATS_ROWS)
            _finish_columns(hi, pid_m, cols0 + CHUNK, b_ptr, s_ptr, h_ptr, mean_ptr, m2_ptr, M, N, stride_h,
                            BLOCK_M, STATS_ROWS)
        else:
            tl.static_assert(BLOCK_N == 4 * CHUNK)
            q0, q1 = _halves(lo, BLOCK_M, BLOCK_N // 2)
            _finish_columns(q0, pid_m, cols0, b_ptr, s_ptr, h_ptr, mean_ptr, m2_ptr, M, N, stride_h,
                            BLOCK_M, STATS_ROWS)
            _finish_columns(q1, pid_m, cols0 + CHUNK, b_ptr, s_ptr, h_ptr, mean_ptr, m2_ptr, M, N, stride_h,
                            BLOCK_M, STATS_ROWS)
            q2, q3 = _halves(hi, BLOCK_M, BLOCK_N // 2)
            _finish_columns(q2, pid_m, cols0 + 2 * CHUNK, b_ptr, s_ptr, h_ptr, mean_ptr, m2_ptr, M, N,
                            stride_h, BLOCK_M, STATS_ROWS)
            _finish_columns(q3, pid_m, cols0 + 3 * CHUNK, b_ptr, s_ptr, h_ptr, mean_ptr, m2_ptr, M, N,
                            stride_h, BLOCK_M, STATS_ROWS)
    if finished:
        # The tile that completes its column block merges the block's statistics once.
        tl.debug_barrier()  # every thread's statistics are written before the release below
        done = tl.atomic_add(cnt_ptr + COL_COUNTERS + pid_n, 1, sem="acq_rel", scope="gpu")
        if done == tiles_m - 1:
            tl.store(cnt_ptr + COL_COUNTERS + pid_n, 0)
            _finalize(mean_ptr, m2_ptr, b_ptr, s_ptr, g_ptr, beta_ptr, ac_ptr, M, N, stride_h, eps, pid_n * BLOCK_N,
                      BLOCK_N, STATS_ROWS, 16)


@triton.jit
def batch_norm_apply_kernel(h_ptr, ac_ptr, y_ptr, M, n_units, h_units, y_units,
                            Y_UNIT: tl.constexpr, UNIT: tl.constexpr,
                            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """y = h * a + c per feature: one read of h, one write of y."""
    N = n_units * Y_UNIT
    stride_h = h_units * UNIT
    stride_y = y_units * Y_UNIT
    row0 = tl.program_id(0) * BLOCK_M
    rows = tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < N
    a = tl.load(ac_ptr + cols, mask=col_mask, other=0.0)
    c = tl.load(ac_ptr + stride_h + cols, mask=col_mask, other=0.0)
    mask = (row0 + rows < M)[:, None] & col_mask[None, :]
    h = tl.load(h_ptr + row0.to(tl.int64) * stride_h + rows[:, None] * stride_h + cols[None, :], mask=mask,
                other=0.0).to(tl.float32)
    y = h * a[None, :] + c[None, :]
    tl.store(y_ptr + row0.to(tl.int64) * stride_y + rows[:, None] * stride_y + cols[None, :],
             y.to(y_ptr.dtype.element_ty), mask=mask)


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


@triton.jit
def zero_kernel(ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(ptr + offs, tl.zeros((BLOCK,), dtype=tl.int32), mask=offs < n)


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


def _unit(t):
    """Largest of 8, 4, 2, 1 elements that divides the row length, row stride and base offset."""
    for unit in (8, 4, 2, 1):
        if t.shape[1] % unit == 0 and t.stride(0) % unit == 0 and t.data_ptr() % (unit * t.element_size()) == 0:
            return unit
    return 1


def _sm_count(device):
    """SMs of the device; with no device, 132 (H100/H200) when compiling ahead of time, so the
    schedule is the one the GPU runs, and 4 under the interpreter, so small shapes reach the split
    tiles."""
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).multi_processor_count
    return 4 if os.environ.get("TRITON_INTERPRET") == "1" else 132


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale_shape, eps=1e-5, momentum=0.1):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, dtype=torch.float16)
        self.scale = nn.Parameter(torch.randn(scale_shape, dtype=torch.float16))
        self.bn = nn.BatchNorm1d(out_features, eps=eps, momentum=momentum, dtype=torch.float16)
        with torch.no_grad():
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-0.5, 0.5)
        self._counters = {}  # per device: split-tile and column-block counters, zero between launches

    def _counts(self, device, n):
        key = str(device)
        if key not in self._counters or self._counters[key].numel() < n:
            counts = torch.empty((n,), device=device, dtype=torch.int32)
            zero_kernel[(triton.cdiv(n, 1024),)](counts, n, BLOCK=1024)
            self._counters[key] = counts
        return self._counters[key]

    def forward(self, x):
        w, b = self.gemm.weight, self.gemm.bias
        M = x.shape[0]
        N = w.shape[0]
        x, w = _aligned_rows(x), _aligned_rows(w)
        K = x.shape[1]  # padded with zeros where needed, which add nothing to the product
        n_pad = triton.cdiv(N, UNIT) * UNIT
        dev = x.device
        sms = _sm_count(dev)
        counts = self._counts(dev, COUNTERS + triton.cdiv(N, 64))
        ws = torch.empty((_workspace_elements(M, N, K, sms),), device=dev, dtype=torch.float32)
        h = torch.empty((M, n_pad), device=dev, dtype=x.dtype)  # rows padded to 16 bytes
        n_slices = triton.cdiv(M, STATS_ROWS)
        means = torch.empty((n_slices, n_pad), device=dev, dtype=torch.float32)
        m2s = torch.empty_like(means)
        ac = torch.empty((2, n_pad), device=dev, dtype=torch.float32)
        # block shapes are set per config by _set_blocks
        x_desc = TensorDescriptor(x, [M, K], [x.stride(0), 1], [64, 64])
        w_desc = TensorDescriptor(w, [N, K], [w.stride(0), 1], [64, 64])
        linear_scale_stats_kernel[_grid(M, N, K, sms)](
            x_desc, w_desc, x, w, b, self.scale, self.bn.weight, self.bn.bias, h, means, m2s, ac, ws, counts,
            M, N, K // UNIT, x.stride(0) // UNIT, w.stride(0) // UNIT, n_pad // UNIT, self.bn.eps, sms,
            UNIT=UNIT, STATS_ROWS=STATS_ROWS, CHUNK=CHUNK, COL_COUNTERS=COUNTERS,
        )
        y = torch.empty((M, N), device=dev, dtype=x.dtype)
        y_unit = _unit(y)
        batch_norm_apply_kernel[(triton.cdiv(M, 64), triton.cdiv(N, 128))](
            h, ac, y, M, N // y_unit, n_pad // UNIT, y.stride(0) // y_unit, Y_UNIT=y_unit, UNIT=UNIT,
            BLOCK_M=64, BLOCK_N=128, num_warps=4,
        )
        return y
