"""Linear + Mish + Mish: W's 9000-byte rows read in place as two TMA descriptors (even rows, odd
rows) instead of copied into padded rows each forward; x's copy with 8-byte loads.

Evidence (round 5 brief, best = round 3 on an H100): 1500 x 4500 -> 7500 is furthest from its floor
(43.6%), and its time split says why: 0.228 ms in the GEMM (60% of its floor) and 0.072 ms (23%
of the forward) in pad_rows_kernel, launched twice, copying x (1500 rows) and W (7500 rows) into
rows padded 4500 -> 4504 so that TMA accepts their strides. Five sixths of that copy is W: 67.5 MB
read and written again on every forward (~135 MB of the ~162 MB). The brief's findings
(nv.scalar-access, nv.int64-index, line 262) are that copy's loads: 2-byte, per-element int64.
Round 4 (persistent tiles to hide the epilogue on cases 2 and 4) was refused at 0.975x: it lost
2.5-5% on the four aligned cases and was flat (1.002x) on this one, so the tile schedule and the
config list of round 3 stay exactly as they are and only case 3's copy is attacked.
Expected: ~40 us off case 3's 0.309 ms (about 1.15x there, 1.03x geomean), the other cases as round 3.

What changed:
- TMA needs 16-byte row strides; W's rows are 9000 bytes apart, but every second row is 18000
  bytes apart (K = 4 mod 8 makes 2K a multiple of 8 elements). W is read in place as two
  descriptors: its even rows (base W, stride 2K) and its odd rows, whose base moves back
  K % 8 = 4 elements onto a 16-byte boundary (row 1 starts 8 bytes past one; a box's first column
  must be 16-byte aligned too, on the GPU as in the interpreter, so the shift cannot go into the
  coordinate). The odd rows' column j is then W's column j - 4, so x is copied twice into rows of
  K + 4 = 4504: as it lies and moved right by 4 (zeros meet the previous row's last 4 elements).
  A BLOCK_M x BLOCK_N tile runs two BLOCK_M x BLOCK_N/2 wgmma dots per K step (even W rows with
  x, odd W rows with the moved x), and the two accumulators are interleaved back into column
  order in registers (tl.join and a reshape: a relabelling of each thread's registers) before
  the unchanged epilogue, so the stores stay 16-byte. W's copy (67.5 MB read, 67.5 MB written per
  forward) disappears; x's grows from 13.5 to 27 MB written; the GEMM moves one more 128x64 box
  per K step from L2 (64 KiB a stage at 128x256, 192 KiB for 3 stages). Where W is read in pairs
  the configs are the TMA ones whose stages fit (128x256 x3, 128x128 x4); every other shape keeps
  round 3's six configs and its code path.
- the copy kernel loads PART elements at a time (the largest power of two up to 8 dividing K, the
  row stride and the shift: 4 here, 8-byte loads instead of 2-byte) from an int64 row base with
  int32 offsets inside the block (the two findings on line 262).
Kept from round 3: operands through TMA (hardware zero fill past M, N and K), output rows padded to
a multiple of 8 and returned as a view (16-byte stores), the tail past the last whole wave split
along K where that fills the machine (1500 x 7500 at 128x128: 48 tiles in two pieces; a piece parks
its interleaved partial), autotuned 128x256 / 256x128 / 128x128 tiles in GROUP_M order, bias and
both Mish on the fp32 accumulator in two column halves with one fp16 rounding.
- mish(v) = v tanh(softplus(v)) uses tanh(log(1 + t)) = n / (n + 2), n = t (t + 2), t = e^v, with t
  taken at min(v, 20) (where the ratio is 1 in fp32) so nothing overflows; its division already
  lowers to div.full.f32 (one MUFU reciprocal), so the epilogue is left as it is.
"""
import math
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

UNIT = 8  # fp16 elements per 16 bytes
CHUNK = 64  # rows and columns per program of the split tiles' epilogue
MIN_STEPS = 4  # fewest K steps a piece of a split tile gets
MAX_SPLIT = 8  # most pieces a tile is split into (the epilogue reads them all back)
PAIR_SMEM = 192 * 1024  # pipeline bytes per SM a row-pair config may use (sm_90: 227 KiB per SM)


def _set_blocks(nargs):
    """The descriptors' block shapes follow the config (TMA boxes of BLOCK_M x BLOCK_K and
    BLOCK_N x BLOCK_K, or two of BLOCK_N / 2 x BLOCK_K where W is read in row pairs)."""
    nargs["x_desc"].block_shape = [nargs["BLOCK_M"], nargs["BLOCK_K"]]
    nargs["x_odd_desc"].block_shape = [nargs["BLOCK_M"], nargs["BLOCK_K"]]
    w_rows = nargs["BLOCK_N"] // 2 if nargs["W_SHIFT"] else nargs["BLOCK_N"]
    nargs["w_desc"].block_shape = [w_rows, nargs["BLOCK_K"]]
    nargs["w_odd_desc"].block_shape = [w_rows, nargs["BLOCK_K"]]


def _pair_stage_bytes(c):
    """Shared memory of one pipeline stage where W is read in pairs: two x boxes, two half W boxes."""
    return (2 * c.kwargs["BLOCK_M"] + c.kwargs["BLOCK_N"]) * c.kwargs["BLOCK_K"] * 2


def _prune(configs, nargs, **kwargs):
    """Where W is read in pairs: only TMA configs (the cp.async ones read W's rows as they lie and
    need them padded), and only those whose pipeline, with its second x box, still fits the
    programs per SM they assume (128x256 at 3 stages and 128x128 at 4: 192 KiB; 256x128 would
    need 240 KiB)."""
    if kwargs["W_SHIFT"]:
        return [c for c in configs
                if c.kwargs["TMA"] and c.kwargs["PER_SM"] * c.num_stages * _pair_stage_bytes(c) <= PAIR_SMEM]
    return configs


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
    return _schedule(a["M"], a["n_units"] * UNIT, a["k_units"] * UNIT, a["BLOCK_M"], a["BLOCK_N"],
                     a["BLOCK_K"], _slots(a["sms"], a["PER_SM"]))


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
def mish(v):
    t = tl.exp(tl.minimum(v, 20.0))
    n = t * (t + 2.0)
    return v * (n / (n + 2.0))


@triton.jit
def _epilogue_store(acc, row0, rows, cols, b_ptr, y_ptr, M, N, n_out, stride_y):
    """y[row0 + rows, cols] = fp16(mish(mish(acc + b))) from the fp32 accumulator; rows are offsets
    from row0 inside the tile, cols absolute columns. The bias exists for the n_out real columns;
    y's rows are N >= n_out wide (a multiple of 8), so the store's mask is constant over every 8
    columns and each store is 16 bytes."""
    bias = tl.load(b_ptr + cols, mask=cols < n_out, other=0.0).to(tl.float32)
    y = mish(mish(acc + bias[None, :]))
    y_tile = y_ptr + row0.to(tl.int64) * stride_y  # int64 base, int32 offsets inside the tile
    tl.store(y_tile + rows[:, None] * stride_y + cols[None, :], y.to(y_ptr.dtype.element_ty),
             mask=(row0 + rows < M)[:, None] & (cols < N)[None, :])


@triton.jit
def _column_halves(acc, HALF: tl.constexpr):
    """The left and right column halves of a tile (a relabelling of each thread's registers)."""
    return tl.split(tl.permute(tl.reshape(acc, (acc.shape[0], 2, HALF)), (0, 2, 1)))


@triton.jit
def _interleave(even, odd, WIDTH: tl.constexpr):
    """The columns of W's even and odd rows back in output order: even[:, 0], odd[:, 0], even[:, 1], ..."""
    return tl.reshape(tl.join(even, odd), (even.shape[0], WIDTH))


@triton.jit
def _epilogue_store_halves(acc, row0, rows, col0, b_ptr, y_ptr, M, N, n_out, stride_y, BLOCK_N: tl.constexpr):
    """The epilogue of a whole tile in two column halves: the whole tile's Mish temporaries spill
    at 128x256."""
    HALF: tl.constexpr = BLOCK_N // 2
    acc0, acc1 = _column_halves(acc, HALF)
    _epilogue_store(acc0, row0, rows, col0 + tl.arange(0, HALF), b_ptr, y_ptr, M, N, n_out, stride_y)
    _epilogue_store(acc1, row0, rows, col0 + HALF + tl.arange(0, HALF), b_ptr, y_ptr, M, N, n_out, stride_y)


@triton.jit
def _epilogue_store_pairs(acc_even, acc_odd, row0, rows, col0, b_ptr, y_ptr, M, N, n_out, stride_y,
                          BLOCK_N: tl.constexpr):
    """The same two column halves from the accumulators of W's even and odd rows: the left halves
    of both, interleaved, are the tile's left half of columns."""
    HALF: tl.constexpr = BLOCK_N // 2
    even0, even1 = _column_halves(acc_even, HALF // 2)
    odd0, odd1 = _column_halves(acc_odd, HALF // 2)
    _epilogue_store(_interleave(even0, odd0, HALF), row0, rows, col0 + tl.arange(0, HALF), b_ptr, y_ptr,
                    M, N, n_out, stride_y)
    _epilogue_store(_interleave(even1, odd1, HALF), row0, rows, col0 + HALF + tl.arange(0, HALF), b_ptr, y_ptr,
                    M, N, n_out, stride_y)


@triton.jit
def _tile_coords(tile, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """(row tile, column tile) of a linear tile index, in groups of GROUP_M row tiles so that
    consecutive programs share W tiles in L2."""
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * tiles_n
    first_m = (tile // group) * GROUP_M
    rows_in_group = min(tiles_m - first_m, GROUP_M)
    return first_m + (tile % group) % rows_in_group, (tile % group) // rows_in_group


@triton.jit
def _park_partial(acc, ws_ptr, piece, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """A piece of a split tile parks its fp32 partial, in column order, for split_tile_mish_kernel."""
    local_m = tl.arange(0, BLOCK_M)
    local_n = tl.arange(0, BLOCK_N)
    tl.store(ws_ptr + piece * (BLOCK_M * BLOCK_N) + local_m[:, None] * BLOCK_N + local_n[None, :], acc)


@triton.autotune(configs=_CONFIGS, key=["M", "n_units", "k_units", "sms", "W_SHIFT"],
                 prune_configs_by={"early_config_prune": _prune})
@triton.heuristics(_HEURISTICS)
@triton.jit
def linear_mish_mish_kernel(
    x_desc, x_odd_desc, w_desc, w_odd_desc, x_ptr, w_ptr, b_ptr, y_ptr, ws_ptr,
    M, n_out, n_units, k_units, xm_units, wn_units, ym_units, sms, full_tiles,
    UNIT: tl.constexpr, W_SHIFT: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    PER_SM: tl.constexpr, TMA: tl.constexpr, SPLIT: tl.constexpr, EVEN_K: tl.constexpr,
):
    """y = fp16(epilogue(x @ W.T + b)) for whole tiles; programs past full_tiles are pieces
    of the tail tiles, SPLIT per tile, each over its share of the K steps, parking fp32 partials.
    W_SHIFT > 0: w_desc holds W's even rows, w_odd_desc its odd rows W_SHIFT elements late, and
    x_odd_desc x as late, so that both dots see matching K (see _row_pair_operands)."""
    tl.static_assert(TMA or W_SHIFT == 0)
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
    rows_out = tl.arange(0, BLOCK_M)
    stride_y = ym_units * UNIT

    if W_SHIFT > 0:
        # two dots per K step: output columns col0 + 2j from W's even rows, col0 + 2j + 1 from its odd
        # rows against x shifted as they are; TMA zero-fills past M, N and K as below
        HALF_N: tl.constexpr = BLOCK_N // 2
        acc_even = tl.zeros((BLOCK_M, HALF_N), dtype=tl.float32)
        acc_odd = tl.zeros((BLOCK_M, HALF_N), dtype=tl.float32)
        for k in range(k_lo, k_hi):
            a_even = x_desc.load([row0, k * BLOCK_K])
            a_odd = x_odd_desc.load([row0, k * BLOCK_K])
            b_even = w_desc.load([pid_n * HALF_N, k * BLOCK_K])
            b_odd = w_odd_desc.load([pid_n * HALF_N, k * BLOCK_K])
            acc_even = tl.dot(a_even, b_even.T, acc_even)
            acc_odd = tl.dot(a_odd, b_odd.T, acc_odd)
        if SPLIT > 1:
            if pid >= full_tiles:
                _park_partial(_interleave(acc_even, acc_odd, BLOCK_N), ws_ptr, pid - full_tiles, BLOCK_M, BLOCK_N)
            else:
                _epilogue_store_pairs(acc_even, acc_odd, row0, rows_out, col0, b_ptr, y_ptr, M, N, n_out,
                                      stride_y, BLOCK_N)
        else:
            _epilogue_store_pairs(acc_even, acc_odd, row0, rows_out, col0, b_ptr, y_ptr, M, N, n_out, stride_y,
                                  BLOCK_N)
    else:
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        if TMA:
            # TMA boxes: rows past M, columns past N and K steps past K arrive as zeros.
            for k in range(k_lo, k_hi):
                a = x_desc.load([row0, k * BLOCK_K])
                b = w_desc.load([col0, k * BLOCK_K])
                acc = tl.dot(a, b.T, acc)
        else:
            stride_xm = xm_units * UNIT
            stride_wn = wn_units * UNIT
            offs_k = tl.arange(0, BLOCK_K)
            # edge rows and columns clamped onto the last valid one (their results are masked at the
            # store); int64 tile bases, int32 offsets inside the tile
            rows = tl.minimum(row0 + tl.arange(0, BLOCK_M), M - 1) - row0
            cols = tl.minimum(col0 + tl.arange(0, BLOCK_N), n_out - 1) - col0
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
        if SPLIT > 1:
            if pid >= full_tiles:
                _park_partial(acc, ws_ptr, pid - full_tiles, BLOCK_M, BLOCK_N)
            else:
                _epilogue_store_halves(acc, row0, rows_out, col0, b_ptr, y_ptr, M, N, n_out, stride_y, BLOCK_N)
        else:
            _epilogue_store_halves(acc, row0, rows_out, col0, b_ptr, y_ptr, M, N, n_out, stride_y, BLOCK_N)


@triton.jit
def split_tile_mish_kernel(
    ws_ptr, b_ptr, y_ptr, M, n_out, n_units, ym_units, full_tiles,
    UNIT: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr,
    SPLIT: tl.constexpr, CHUNK: tl.constexpr,
):
    """The epilogue of the split tiles, CHUNK x CHUNK at a time: the tile's SPLIT fp32 pieces added
    in a fixed order (deterministic), then bias, both Mish and the fp16 store."""
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
    _epilogue_store(total, pid_m * BLOCK_M + r, tl.arange(0, CHUNK), pid_n * BLOCK_N + local_n, b_ptr, y_ptr,
                    M, N, n_out, ym_units * UNIT)


@triton.jit
def pad_rows_kernel(src_ptr, dst_ptr, R, k_parts, src_parts, stride_k, dst_units, width_units,
                    BLOCK_R: tl.constexpr, BLOCK_K: tl.constexpr, UNIT: tl.constexpr, PART: tl.constexpr,
                    SHIFT: tl.constexpr):
    """Copy c (program axis 2) of src's rows: dst[r, c * width + j] = src[r, j - c * SHIFT] where that
    is inside src's K columns, zeros elsewhere up to the width. K and src's row stride come in
    units of PART elements (the largest power of two up to UNIT dividing both, and SHIFT) so that
    the loads are PART elements wide; the block's first row is an int64 base, the offsets inside
    it int32."""
    K = k_parts * PART
    stride_r = src_parts * PART
    stride_d = dst_units * UNIT
    width = width_units * UNIT
    copy = tl.program_id(2)
    row0 = tl.program_id(0) * BLOCK_R
    rows = tl.arange(0, BLOCK_R)
    cols = tl.program_id(1) * BLOCK_K + tl.arange(0, BLOCK_K)
    src_cols = cols - copy * SHIFT
    row_mask = (row0 + rows < R)[:, None]
    src = src_ptr + row0.to(tl.int64) * stride_r
    dst = dst_ptr + row0.to(tl.int64) * stride_d + copy * width
    value = tl.load(src + rows[:, None] * stride_r + src_cols[None, :] * stride_k,
                    mask=row_mask & ((src_cols >= 0) & (src_cols < K))[None, :], other=0.0)
    tl.store(dst + rows[:, None] * stride_d + cols[None, :], value, mask=row_mask & (cols[None, :] < width))


def _padded_copies(t, width, shift, copies):
    """[rows, copies * width]: copy c of t's rows moved right by c * shift elements, zeros around."""
    rows, cols = t.shape
    part = math.gcd(cols, t.stride(0), shift or UNIT, UNIT) if t.stride(1) == 1 else 1
    out = torch.empty((rows, copies * width), device=t.device, dtype=t.dtype)
    pad_rows_kernel[(triton.cdiv(rows, 16), triton.cdiv(width, 256), copies)](
        t, out, rows, cols // part, t.stride(0) // part, t.stride(1), copies * width // UNIT, width // UNIT,
        BLOCK_R=16, BLOCK_K=256, UNIT=UNIT, PART=part, SHIFT=shift, num_warps=4)
    return out


def _aligned_rows(t):
    """``t`` itself when its rows start on 16-byte boundaries and hold whole 16-byte units (what TMA
    and 16-byte cp.async need), else a copy whose rows are zero-padded to a multiple of UNIT."""
    rows, cols = t.shape
    if cols % UNIT == 0 and t.stride(0) % UNIT == 0 and t.stride(1) == 1 and t.data_ptr() % 16 == 0:
        return t
    return _padded_copies(t, triton.cdiv(cols, UNIT) * UNIT, 0, 1)


def _pair_shift(w):
    """K % UNIT where W's rows can be read in place as row pairs (contiguous, 16-byte aligned, K an
    odd multiple of UNIT / 2, so that 2K is a whole number of 16-byte units), else 0."""
    rows, cols = w.shape
    shift = cols % UNIT
    if (shift == UNIT // 2 and rows >= 2 and w.stride(1) == 1 and w.stride(0) == cols
            and w.data_ptr() % 16 == 0):
        return shift
    return 0


def _row_pair_operands(x, w, shift):
    """(K, x's descriptors, W's descriptors) for W read in place as its even rows and its odd rows,
    each 2K apart (a 16-byte multiple). Row 1 starts 8 bytes past a 16-byte boundary and TMA boxes
    start only on such boundaries, so the odd rows' descriptor starts `shift` elements early: its
    column j is W's column j - shift. x is copied twice into rows of K + shift, as it lies and
    moved right by `shift`, so the odd rows meet the matching x columns (zeros against the
    previous row's last `shift` elements); the even rows' boxes end at K, zeros past it."""
    rows, cols = w.shape
    width = cols + shift  # a multiple of UNIT
    x2 = _padded_copies(x, width, shift, 2)
    x_even = TensorDescriptor(x2, [x.shape[0], width], [2 * width, 1], [64, 64])
    x_odd = TensorDescriptor(x2.view(-1)[width:], [x.shape[0], width], [2 * width, 1], [64, 64])
    w_even = TensorDescriptor(w, [triton.cdiv(rows, 2), cols], [2 * cols, 1], [64, 64])
    w_odd = TensorDescriptor(w.view(-1)[cols - shift:], [rows // 2, width], [2 * cols, 1], [64, 64])
    return width, (x_even, x_odd), (w_even, w_odd)


def _sm_count(device):
    """SMs of the device; with no device, 132 (H100/H200) when compiling ahead of time, so the
    schedule is the one the GPU runs, and 4 under the interpreter, so small shapes reach the split
    tiles."""
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).multi_processor_count
    return 4 if os.environ.get("TRITON_INTERPRET") == "1" else 132


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, dtype=torch.float16)

    def forward(self, x):
        M = x.shape[0]
        w, b = self.linear.weight, self.linear.bias
        N = w.shape[0]
        # W read in place as row pairs where its rows are 8 bytes off 16-byte alignment, else as
        # rows padded like x's; K is then x's padded width (the zeros add nothing to the product)
        w_shift = _pair_shift(w)
        if w_shift:
            K, (x_desc, x_odd_desc), (w_desc, w_odd_desc) = _row_pair_operands(x, w, w_shift)
        else:
            x, w = _aligned_rows(x), _aligned_rows(w)
            K = x.shape[1]
            x_desc = x_odd_desc = TensorDescriptor(x, [M, K], [x.stride(0), 1], [64, 64])
            w_desc = w_odd_desc = TensorDescriptor(w, [N, K], [w.stride(0), 1], [64, 64])
        dev = x.device
        sms = _sm_count(dev)
        # rows as wide as the next multiple of 8 (16-byte stores); the view returned leaves the
        # extra columns out
        n_padded = triton.cdiv(N, UNIT) * UNIT
        y = torch.empty((M, n_padded), device=dev, dtype=x.dtype)
        ws = torch.empty((_workspace_elements(M, n_padded, K, sms),), device=dev, dtype=torch.float32)
        # descriptors' block shapes are set per config by _set_blocks
        linear_mish_mish_kernel[_grid(M, n_padded, K, sms)](
            x_desc, x_odd_desc, w_desc, w_odd_desc, x, w, b, y, ws, M, N, n_padded // UNIT, K // UNIT,
            x.stride(0) // UNIT, w.stride(0) // UNIT, y.stride(0) // UNIT, sms, UNIT=UNIT, W_SHIFT=w_shift)
        # the tile the autotuner ran (set by every Autotuner.run; a capture that bypasses it gets the first)
        config = getattr(linear_mish_mish_kernel, "best_config", None) or linear_mish_mish_kernel.configs[0]
        bm, bn = config.kwargs["BLOCK_M"], config.kwargs["BLOCK_N"]
        tiles, full, split = _schedule(M, n_padded, K, bm, bn, config.kwargs["BLOCK_K"],
                                       _slots(sms, config.kwargs["PER_SM"]))
        if split > 1:
            split_tile_mish_kernel[(tiles - full, (bm // CHUNK) * (bn // CHUNK))](
                ws, b, y, M, N, n_padded // UNIT, y.stride(0) // UNIT, full, UNIT=UNIT,
                BLOCK_M=bm, BLOCK_N=bn, GROUP_M=config.kwargs["GROUP_M"], SPLIT=split, CHUNK=CHUNK, num_warps=4)
        return y if n_padded == N else y[:, :N]
