"""Linear + multiply + LeakyReLU: round 5's kernel, with the two big TMA tiles also in 32-deep K
steps at nine stages, so that more of the misaligned operand rows' loads are in flight.

Round 5's best runs cases 0-3 at 88-96% of the roofline and case 4, 1537 x 6000 -> 5000, at 72%
(0.1686 ms against eager's 0.1566), compute-bound, no finding. Fitting the present brief's times as
launch + waves x (K steps x c + epilogue) on the aligned cases (0 and 3 give c, 2 the rest) gives
launch 10.8 us, epilogue 4.0 us a wave and c = 0.66 us per 128x256x64 step; case 4 (two waves of
94 steps) then needs c = 0.80, and round 4's 0.1828 ms, before the four-stage tiles, c = 0.87. One
more stage, from 96 to 144 kB of loads ahead of the step being computed, took back a third of the
gap: the K loop of the case whose rows are 12000 bytes apart (96 bytes off a 128-byte line, so
three of four box rows span two lines) is waiting on loads, and more bytes in flight are what
helped. A fifth 64-deep stage does not fit (245 kB against sm_90's 227 kB), but the same bytes in
32-deep steps do: 128x256x32 and 256x128x32 at nine stages hold 216 kB of operand buffers, eight
steps (192 kB) in flight while one is computed, a third more than four stages of 64; if the step
shrinks as it did from three stages to four, c goes to about 0.72 and case 4 to about 0.154 ms,
cuBLAS's time there. The IR (ladder ir, case 4): TMA copies pipelined with 9 buffers, 222.3 kB of
shared memory, 154 and 184 registers, no spills, wgmma with two HGMMA per step.
Not taken, on the same fit: the second wave is not the loss (128 of its 132 programs run, so a
balanced stream-K wave saves 3 of 188 steps, less than its fp32 partials cost; the 20 one-row tiles
of M = 12 x 128 + 1 cost time only if the 108 whole tiles of the second wave are split, about
30 MB of partials for 17 steps); nor copies with rows padded to whole lines: x's (37 MB moved,
about 13 us) could save at most its third of the per-step loss at 128x256 (about 8 us), W's costs
40 us a forward.
What changed: the two 32-deep nine-stage configs beside round 5's eight, which stay unchanged; the
autotuner (keyed on M, N, K and the SM count) times all ten per shape, so the aligned cases keep
the configs they win. Kernel code unchanged: operands through TMA descriptors (zero fill past M, N
and K, here K's last 32-step half empty), output rows padded to a multiple of 8 (16-byte stores, a
view returned), tiles past the last whole wave split along K where that fills the idle SMs (fp32
pieces added in a fixed order by a second kernel), bias, multiplier and LeakyReLU on the fp32
accumulator with one fp16 rounding, GROUP_M-grouped order.
"""
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


def _set_blocks(nargs):
    """The descriptors' block shapes follow the config (TMA boxes of BLOCK_M x BLOCK_K, BLOCK_N x BLOCK_K)."""
    nargs["x_desc"].block_shape = [nargs["BLOCK_M"], nargs["BLOCK_K"]]
    nargs["w_desc"].block_shape = [nargs["BLOCK_N"], nargs["BLOCK_K"]]


def _configs():
    # (BLOCK_M, BLOCK_N, BLOCK_K, stages, warps, programs per SM on sm_90 from the IR's occupancy, TMA)
    # round 4's six, the two big TMA tiles with four stages (192 kB of operand buffers, three 48 kB
    # steps ahead of the one computed), then the same tiles in 32-deep steps at nine stages (216 kB,
    # eight 24 kB steps ahead: 192 kB of loads in flight instead of 144)
    shapes = [(128, 256, 64, 3, 8, 1, True), (256, 128, 64, 3, 8, 1, True), (128, 128, 64, 4, 8, 1, True),
              (128, 128, 64, 3, 8, 2, True), (128, 256, 64, 3, 8, 1, False), (128, 128, 64, 4, 8, 1, False),
              (128, 256, 64, 4, 8, 1, True), (256, 128, 64, 4, 8, 1, True),
              (128, 256, 32, 9, 8, 1, True), (256, 128, 32, 9, 8, 1, True)]
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
    return _schedule(a["M"], a["n_units"] * a["Y_UNIT"], a["k_units"] * UNIT, a["BLOCK_M"], a["BLOCK_N"],
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
def _epilogue_store(acc, row0, rows, cols, b_ptr, y_ptr, M, N, n_out, stride_y, multiplier, slope):
    """y[row0 + rows, cols] = fp16(leaky_relu((acc + b) * multiplier)) from the fp32 accumulator;
    Rows are offsets from row0 inside the tile, cols absolute columns. The bias exists for the
    n_out real columns; y's rows are N >= n_out wide (a multiple of 8), so the store's mask is
    constant over every 8 columns and each store is 16 bytes."""
    bias = tl.load(b_ptr + cols, mask=cols < n_out, other=0.0).to(tl.float32)
    v = acc * multiplier + (bias * multiplier)[None, :]
    y = tl.where(v >= 0.0, v, v * slope)
    y_tile = y_ptr + row0.to(tl.int64) * stride_y  # int64 base, int32 offsets inside the tile
    tl.store(y_tile + rows[:, None] * stride_y + cols[None, :], y.to(y_ptr.dtype.element_ty),
             mask=(row0 + rows < M)[:, None] & (cols < N)[None, :])


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


@triton.autotune(configs=_CONFIGS, key=["M", "n_units", "k_units", "sms"])
@triton.heuristics(_HEURISTICS)
@triton.jit
def gemm_multiply_leaky_relu_kernel(
    x_desc, w_desc, x_ptr, w_ptr, b_ptr, y_ptr, ws_ptr,
    M, n_out, n_units, k_units, xm_units, wn_units, ym_units, multiplier, slope, sms, full_tiles,
    UNIT: tl.constexpr, Y_UNIT: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    PER_SM: tl.constexpr, TMA: tl.constexpr, SPLIT: tl.constexpr, EVEN_K: tl.constexpr,
):
    """y = fp16(epilogue(x @ W.T + b)) for whole tiles; programs past full_tiles are pieces
    of the tail tiles, SPLIT per tile, each over its share of the K steps, parking fp32 partials."""
    N = n_units * Y_UNIT
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

    rows_out = tl.arange(0, BLOCK_M)
    cols_out = col0 + tl.arange(0, BLOCK_N)
    stride_y = ym_units * Y_UNIT
    if SPLIT > 1:
        if pid >= full_tiles:
            # a piece of a split tile: park its fp32 partial for split_tile_leaky_relu_kernel
            local_m = tl.arange(0, BLOCK_M)
            local_n = tl.arange(0, BLOCK_N)
            tl.store(ws_ptr + (pid - full_tiles) * (BLOCK_M * BLOCK_N) + local_m[:, None] * BLOCK_N
                     + local_n[None, :], acc)
        else:
            _epilogue_store(acc, row0, rows_out, cols_out, b_ptr, y_ptr, M, N, n_out, stride_y, multiplier, slope)
    else:
        _epilogue_store(acc, row0, rows_out, cols_out, b_ptr, y_ptr, M, N, n_out, stride_y, multiplier, slope)


@triton.jit
def split_tile_leaky_relu_kernel(
    ws_ptr, b_ptr, y_ptr, M, n_out, n_units, ym_units, multiplier, slope, full_tiles,
    Y_UNIT: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr,
    SPLIT: tl.constexpr, CHUNK: tl.constexpr,
):
    """The epilogue of the split tiles, CHUNK x CHUNK at a time: the tile's SPLIT fp32 pieces added
    in a fixed order (deterministic), then bias, multiplier, LeakyReLU and the fp16 store."""
    N = n_units * Y_UNIT
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
                    M, N, n_out, ym_units * Y_UNIT, multiplier, slope)


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
    def __init__(self, in_features, out_features, multiplier, negative_slope):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, dtype=torch.float16)
        self.multiplier = multiplier
        self.negative_slope = negative_slope

    def forward(self, x):
        M = x.shape[0]
        w, b = self.gemm.weight, self.gemm.bias
        N = w.shape[0]
        x, w = _aligned_rows(x), _aligned_rows(w)
        K = x.shape[1]  # padded with zeros where needed, which add nothing to the product
        dev = x.device
        sms = _sm_count(dev)
        multiplier, slope = self.multiplier, self.negative_slope
        # rows as wide as the next multiple of 8 (16-byte stores); the view returned leaves the
        # extra columns out
        n_padded = triton.cdiv(N, UNIT) * UNIT
        y = torch.empty((M, n_padded), device=dev, dtype=x.dtype)
        ws = torch.empty((_workspace_elements(M, n_padded, K, sms),), device=dev, dtype=torch.float32)
        # block shapes are set per config by _set_blocks
        x_desc = TensorDescriptor(x, [M, K], [x.stride(0), 1], [64, 64])
        w_desc = TensorDescriptor(w, [N, K], [w.stride(0), 1], [64, 64])
        gemm_multiply_leaky_relu_kernel[_grid(M, n_padded, K, sms)](
            x_desc, w_desc, x, w, b, y, ws, M, N, n_padded // UNIT, K // UNIT, x.stride(0) // UNIT,
            w.stride(0) // UNIT, y.stride(0) // UNIT, multiplier, slope, sms, UNIT=UNIT, Y_UNIT=UNIT)
        # the tile the autotuner ran (set by every Autotuner.run; a capture that bypasses it gets the first)
        kernel = gemm_multiply_leaky_relu_kernel
        config = getattr(kernel, "best_config", None) or kernel.configs[0]
        bm, bn = config.kwargs["BLOCK_M"], config.kwargs["BLOCK_N"]
        tiles, full, split = _schedule(M, n_padded, K, bm, bn, config.kwargs["BLOCK_K"],
                                       _slots(sms, config.kwargs["PER_SM"]))
        if split > 1:
            split_tile_leaky_relu_kernel[(tiles - full, (bm // CHUNK) * (bn // CHUNK))](
                ws, b, y, M, N, n_padded // UNIT, y.stride(0) // UNIT, multiplier, slope, full, Y_UNIT=UNIT,
                BLOCK_M=bm, BLOCK_N=bn, GROUP_M=config.kwargs["GROUP_M"], SPLIT=split, CHUNK=CHUNK, num_warps=4)
        return y if n_padded == N else y[:, :N]
