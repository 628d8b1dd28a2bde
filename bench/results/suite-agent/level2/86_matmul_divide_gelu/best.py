"""Linear + divide + exact GELU: 128x256 Hopper tiles (TMA operands) that the cheaper epilogue lets
compile without spills, and the tiles of a partial last wave split along K over the idle SMs.

Round 1 (1.941x) runs every case at 53-65% of the roofline, case 3 (1500 x 6000 -> 6000) worst. Its
IR (`ladder ir --facts` on best.py) is clean where it looks: 128-bit masked cp.async for both
operands (best.py:50-51), wgmma, a pipelined loop (line 48), 128-bit stores (line 59), no spills.
What it shows instead:
- the tile: every config is 128x128 or smaller, 159 registers at one program per SM (limited by
  registers, best.py:27), since 128x256 spilled in the erf epilogue. A 128x128 tile gives each k-step
  half the wgmma work per byte of shared memory that a 128x256 one does, and runs two warpgroups of
  m64n128 wgmma, so the main loop stays well under the tensor cores' rate (the cases run at 404-488
  TFLOPS from the brief's times, eager's cuBLAS plus GELU at 583-670);
- the waves: case 3's 564 tiles are 4.27 waves on 132 SMs (5 waves of time for 4.27 of work: 85%);
  at 128x256 it would be 288 tiles = 2.18 waves (3 of time, 73%) and case 4 (600 x 8192 -> 16384)
  320 tiles = 2.42 waves (81%); cases 0-2 are 1.94 or 3.88 waves at 128x256 (256 and 512 tiles);
- the epilogue (PTX of the 128x128 config, per element): a div.full for `/ divisor` (line 56) and
  libdevice's erf (7 FMAs, 4 mul, ex2, 2 setp, selp, neg, abs: about 22 instructions).
What changed:
- the epilogue is v = acc * (1 / divisor) + b / divisor (one FMA; the reciprocal taken once on the
  host, exact for 0.25) and GELU(v) = v Phi(v) with the upper tail 1 - Phi(|v|) = exp2(Q(|v|)), Q a
  degree-8 polynomial fitted to log2 of the normal tail on [0, 6] (|v| clamped to 6, where the tail
  is below 1e-9), and y = max(v, 0) - |v| exp2(Q): per element 10 FMAs, a min, a max and one ex2 in
  the PTX of the 128x256 config (was 7 FMAs, 4 mul, 2 add, sub, neg, abs, 2 setp, selp, ex2 and a
  div.full). Against float64 its GELU errs by at most 2.7e-7 (fp32 rounding; the tail's own error is
  6e-8), and it rounds to a different fp16 than the exact GELU on 2.6% of a fine grid over
  [-12, 12], where fp32 0.5 v (1 + erf(v / sqrt 2)) with a correctly rounded erf does on 4.8%;
- with that epilogue 128x256 (8 warps, 3 stages) and 256x128 compile without spills (160-172
  registers on sm_90; 128x128 drops from 159 to 94-116, so its 3-stage TMA config runs two programs
  per SM, one's epilogue under the other's main loop), and the operands can come through TMA
  descriptors (hardware zero fill at the M, N and K edges: no masked
  or clamped loads, no per-thread pointers; K = 6000 is not a multiple of BLOCK_K). The round-1
  cp.async configs stay beside them so the autotuner keeps whichever is faster;
- the tiles past the last whole wave are split along K (S = min(slots // tail, K steps // 4, 8)
  pieces) where that fills the idle SMs: case 3 at 128x256 runs 264 whole tiles then 24 x 5 pieces
  of 18-19 K steps (about 2.2 waves of time instead of 3), case 4 264 whole tiles then 56 x 2 pieces
  of 64 K steps (2.5 instead of 3); at 128x128 case 3 runs 528 whole tiles then 36 x 3 pieces. A
  piece parks its fp32 partial in a workspace (L2-resident: 15.7 MB on case 3); split_tile_gelu_
  kernel adds each tile's pieces in a fixed order (deterministic, no atomics) and runs the epilogue
  64 x 64 at a time. Cases 0-2 split nothing at any config (1.94, 3.88 or 7.76 waves): SPLIT is a
  constexpr of the config and shape, so their kernel has no split code and the second kernel is
  not launched;
- y's N and row stride reach the kernels in 8-element units where they allow it (16-byte store
  masks on any such N); x and W are copied to rows zero-padded to a multiple of 8 only where their
  rows are not 16-byte aligned (the test case's K = 50), as TMA requires.
Kept from round 1: one kernel for the whole-tile work, bias, 1/divisor and GELU on the fp32
accumulator with one fp16 rounding, autotuned Hopper tiles in GROUP_M-grouped order, 128-bit
copies; unmasked K steps on the pointer path where BLOCK_K divides K, edge rows clamped.
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
def _gelu(v):
    """v * Phi(v). The upper tail 1 - Phi(t), t = |v|, is exp2(Q(t)) with Q(t) = -1 + t (c1 + ... + c8 t^7)
    fitted to log2 of the normal tail on [0, 6] (largest error in the tail 6e-8; t clamped to 6, where
    the tail is 1e-9): Phi(v) = 1 - tail for v >= 0 and tail for v < 0, so no cancellation in the
    negative tail. One ex2, a min, a max and 9 FMAs per element."""
    t = tl.minimum(tl.abs(v), 6.0)
    r = -2.834778342730715e-06 * t + 3.9376125641865656e-05
    r = r * t - 0.00018617308523971587
    r = r * t - 0.00013695274537894875
    r = r * t + 0.0070634400472044945
    r = r * t - 0.05249619111418724
    r = r * t - 0.4592081904411316
    r = r * t - 1.1511051654815674
    # v - |v| tail for v >= 0, v tail = -|v| tail for v < 0: one max and one FMA
    return tl.maximum(v, 0.0) - tl.abs(v) * tl.exp2(r * t - 1.0)


@triton.jit
def _epilogue_store(acc, row0, rows, cols, b_ptr, y_ptr, M, N, stride_y, inv_div):
    """y[row0 + rows, cols] = fp16(gelu((acc + b) * inv_div)), as acc * inv_div + b * inv_div (one FMA
    per element); rows are offsets from row0 inside the tile, cols absolute columns."""
    n_mask = cols < N
    bias = tl.load(b_ptr + cols, mask=n_mask, other=0.0).to(tl.float32) * inv_div
    y = _gelu(acc * inv_div + bias[None, :]).to(y_ptr.dtype.element_ty)
    y_tile = y_ptr + row0.to(tl.int64) * stride_y  # int64 base, int32 offsets inside the tile
    tl.store(y_tile + rows[:, None] * stride_y + cols[None, :], y,
             mask=(row0 + rows < M)[:, None] & n_mask[None, :])


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
def linear_divide_gelu_kernel(
    x_desc, w_desc, x_ptr, w_ptr, b_ptr, y_ptr, ws_ptr,
    M, n_units, k_units, xm_units, wn_units, ym_units, inv_div, sms, full_tiles,
    UNIT: tl.constexpr, Y_UNIT: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    PER_SM: tl.constexpr, TMA: tl.constexpr, SPLIT: tl.constexpr, EVEN_K: tl.constexpr,
):
    """y = fp16(gelu((x @ W.T + b) * inv_div)) for whole tiles; programs past full_tiles are pieces
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

    rows_out = tl.arange(0, BLOCK_M)
    cols_out = col0 + tl.arange(0, BLOCK_N)
    stride_y = ym_units * Y_UNIT
    if SPLIT > 1:
        if pid >= full_tiles:
            # a piece of a split tile: park its fp32 partial for split_tile_gelu_kernel
            local_m = tl.arange(0, BLOCK_M)
            local_n = tl.arange(0, BLOCK_N)
            tl.store(ws_ptr + (pid - full_tiles) * (BLOCK_M * BLOCK_N) + local_m[:, None] * BLOCK_N
                     + local_n[None, :], acc)
        else:
            _epilogue_store(acc, row0, rows_out, cols_out, b_ptr, y_ptr, M, N, stride_y, inv_div)
    else:
        _epilogue_store(acc, row0, rows_out, cols_out, b_ptr, y_ptr, M, N, stride_y, inv_div)


@triton.jit
def split_tile_gelu_kernel(
    ws_ptr, b_ptr, y_ptr, M, n_units, ym_units, inv_div, full_tiles,
    Y_UNIT: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr,
    SPLIT: tl.constexpr, CHUNK: tl.constexpr,
):
    """The epilogue of the split tiles, CHUNK x CHUNK at a time: the tile's SPLIT fp32 pieces added
    in a fixed order (deterministic), then bias, 1/divisor, GELU and the fp16 store."""
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
                    M, N, ym_units * Y_UNIT, inv_div)


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
    def __init__(self, input_size, output_size, divisor):
        super().__init__()
        self.linear = nn.Linear(input_size, output_size, dtype=torch.float16)
        self.divisor = divisor

    def forward(self, x):
        M = x.shape[0]
        w, b = self.linear.weight, self.linear.bias
        N = w.shape[0]
        x, w = _aligned_rows(x), _aligned_rows(w)
        K = x.shape[1]  # padded with zeros where needed, which add nothing to the product
        dev = x.device
        sms = _sm_count(dev)
        inv_div = 1.0 / self.divisor
        y = torch.empty((M, N), device=dev, dtype=x.dtype)
        y_unit = _unit(y)
        ws = torch.empty((_workspace_elements(M, N, K, sms),), device=dev, dtype=torch.float32)
        # block shapes are set per config by _set_blocks
        x_desc = TensorDescriptor(x, [M, K], [x.stride(0), 1], [64, 64])
        w_desc = TensorDescriptor(w, [N, K], [w.stride(0), 1], [64, 64])
        linear_divide_gelu_kernel[_grid(M, N, K, sms)](
            x_desc, w_desc, x, w, b, y, ws, M, N // y_unit, K // UNIT, x.stride(0) // UNIT, w.stride(0) // UNIT,
            y.stride(0) // y_unit, inv_div, sms, UNIT=UNIT, Y_UNIT=y_unit)
        # the tile the autotuner ran (set by every Autotuner.run; a capture that bypasses it gets the first)
        config = getattr(linear_divide_gelu_kernel, "best_config", None) or linear_divide_gelu_kernel.configs[0]
        bm, bn = config.kwargs["BLOCK_M"], config.kwargs["BLOCK_N"]
        tiles, full, split = _schedule(M, N, K, bm, bn, config.kwargs["BLOCK_K"], _slots(sms, config.kwargs["PER_SM"]))
        if split > 1:
            split_tile_gelu_kernel[(tiles - full, (bm // CHUNK) * (bn // CHUNK))](
                ws, b, y, M, N // y_unit, y.stride(0) // y_unit, inv_div, full, Y_UNIT=y_unit,
                BLOCK_M=bm, BLOCK_N=bn, GROUP_M=config.kwargs["GROUP_M"], SPLIT=split, CHUNK=CHUNK, num_warps=4)
        return y
