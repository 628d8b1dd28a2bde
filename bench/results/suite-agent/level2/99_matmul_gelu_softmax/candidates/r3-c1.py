"""Linear + GELU + softmax: the GEMM's operands now come through TMA descriptors (beside the cp.async
configs), its index math is int32 inside a tile; the epilogue still writes the fp16 GELU into the
output with per-64-column row partials (max, sum of exp), the tiles of a mostly idle last wave are
split along K, and one per-row pass merges a row's partials and normalises it.

Round 2 (1.182x) runs the five cases at 41-72% of the roofline and eager (cuBLAS, then GELU and
softmax) is faster on three of them: case 0 (1024 x 8192 -> 8192) 0.2545 against 0.225 ms, case 1
(2048 x 4096 -> 4096, 59.8%) 0.1528 against 0.1406, case 2 (4096 x 4096 -> 2048, 60.3%, the brief's
worst unexplained case: compute-bound, no finding) 0.1515 against 0.1338. With the epilogue already
fused and the extra pass over y only 2 + 2 bytes per element, what is left behind cuBLAS is the
GEMM's main loop. The IR facts show it on every config: both operands are masked cp.async with
per-thread 64-bit addresses inside the K loop (best.py:216-221, `rows`/`cols` clamped and widened to
int64 per element at lines 209-212, nv.int64-index), and the tile the autotuner kept on case 0
is 128x128 with 8 warps at 162 registers, one program per SM. Case 3 (1000 x 5000 -> 5001, 41.3%)
spends 85% of its forward in linear_gelu_stats_kernel at 46% of its own floor, latency-bound: the
same loop, each program issuing 16 + 16 cp.async and their address arithmetic per K step. What
changed:
- x and W come through TMA descriptors in [BLOCK_M, BLOCK_K] and [BLOCK_N, BLOCK_K] boxes as they
  lie (W's box transposed in shared memory for the wgmma): rows past M and N and the K step past
  K arrive as zeros from the hardware, so the loop has no masks, no clamps and no per-thread
  pointers (case 3's K = 5000 made every cp.async step masked: 5000 % 64 = 8). The TMA configs are
  128x256, 256x128 and 128x128 at one program per SM (199, 221 and 160 registers on case 3, no
  spills), and 128x128 at 3 stages capped at 128 registers so that two programs share an SM and
  one tile's GELU-and-statistics epilogue overlaps the other's main loop (what the compute-bound
  cases 1 and 2 lose at one program per SM, where nothing else runs during an epilogue). Capped,
  the whole-tile epilogue spilled 152 B (the GELU temporaries), so that config runs it in
  two 64-column halves, each exactly one softmax slot (the tile split in registers, no shared
  memory): 120 registers, no spills, 2 x 99 KB of shared memory. Round 2's cp.async configs stay
  beside them, so the autotuner keeps whichever is faster per shape and no case loses its round-2
  tile;
- every index inside a tile is int32: the tile's first row times the row stride is taken once in
  int64 as a scalar base, and the per-element offsets added to it are 32-bit (nv.int64-index at
  line 155, the y store's extsi + muli per element, and at lines 209-212 for the cp.async
  configs' operand pointers);
- the tail split carries over unchanged and per config (SPLIT is a constexpr of the config and
  shape): case 3 at 128x256 or 256x128 is 160 tiles, 132 whole then 28 x 4 pieces of 19-20 K
  steps; at 128x128 it is 320 tiles, 264 whole then 56 x 2 pieces at one program per SM, and
  264 whole then 56 x 4 pieces at two.
Kept from round 2: GELU rounded once to fp16 and the statistics taken from the rounded values,
per-64-column slots, y's rows padded to a multiple of 8 elements (every y access 128-bit, the view
of the first N columns returned), the split tiles' fixed-order fp32 sum and 64 x 64 epilogue, the
one-program-per-row merge-and-normalise pass, the exp2 Abramowitz-Stegun GELU, K and strides in
8-element units (x and W copied into zero-padded rows only where they are not 16-byte aligned,
which TMA requires too), Hopper tiles in GROUP_M-grouped order.
"""
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

UNIT = 8  # fp16 elements per 16 bytes
SLOT = 64  # columns per softmax partial; also the width of a split tile's epilogue chunks
MIN_STEPS = 4  # fewest K steps a piece of a split tile gets
MAX_SPLIT = 8  # most pieces a tile is split into (its epilogue reads them all back)


def _set_blocks(nargs):
    """The descriptors' block shapes follow the config (TMA boxes of BLOCK_M x BLOCK_K of x and
    BLOCK_N x BLOCK_K of W)."""
    nargs["x_desc"].block_shape = [nargs["BLOCK_M"], nargs["BLOCK_K"]]
    nargs["w_desc"].block_shape = [nargs["BLOCK_N"], nargs["BLOCK_K"]]


def _configs():
    # (BLOCK_M, BLOCK_N, BLOCK_K, stages, warps, programs per SM on sm_90 from the IR's occupancy, TMA,
    # register cap). The cp.async ones are round 2's (256x128 and 128x128 at 4 warps spill there in
    # the GELU + row-statistics epilogue: left out). The capped 128x128 (two programs per SM; 160
    # registers uncapped) runs its epilogue in column halves, HALVES: whole, it spills 152 B at 128.
    shapes = [(128, 256, 64, 3, 8, 1, True, None), (256, 128, 64, 3, 8, 1, True, None),
              (128, 128, 64, 4, 8, 1, True, None), (128, 128, 64, 3, 8, 2, True, 128),
              (128, 256, 64, 3, 8, 1, False, None), (128, 128, 64, 4, 8, 1, False, None),
              (64, 256, 64, 4, 8, 1, False, None), (64, 128, 64, 4, 4, 2, False, None),
              (128, 64, 64, 4, 4, 2, False, None)]
    return [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8, "PER_SM": p, "TMA": tma,
                           "HALVES": regs is not None},
                          num_stages=s, num_warps=w, maxnreg=regs, pre_hook=_set_blocks)
            for m, n, k, s, w, p, tma, regs in shapes]


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
    return _schedule(a["M"], a["N"], a["k_units"] * a["UNIT"], a["BLOCK_M"], a["BLOCK_N"], a["BLOCK_K"],
                     _slots(a["sms"], a["PER_SM"]))


_HEURISTICS = {
    "full_tiles": lambda a: _args_schedule(a)[1],
    "SPLIT": lambda a: _args_schedule(a)[2],
    "EVEN_K": lambda a: (a["k_units"] * a["UNIT"]) % a["BLOCK_K"] == 0,
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
def _half_erfc_gelu(v):
    """gelu(v) = v * Phi(v): 0.5 * erfc(|v| / sqrt 2) from Abramowitz-Stegun 7.1.26 (absolute error
    under 1.5e-7; the 0.5 folded into the coefficients, exp(-v^2 / 2) as one exp2), then
    Phi = 1 - that for v >= 0 and that for v < 0: no cancellation in the negative tail."""
    t = 1.0 / (1.0 + 0.23164188826636045 * tl.abs(v))
    poly = t * (0.127414796 + t * (-0.142248368 + t * (0.7107068705 + t * (-0.7265760135 + t * 0.5307027145))))
    vh = v * (poly * tl.exp2(v * v * -0.7213475204444817))
    return tl.where(v >= 0, v - vh, vh)


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
def _gelu_stats_store(acc, row0, rows, cols, b_ptr, y_ptr, max_ptr, sum_ptr, M, N, width, slots, first_slot,
                      WIDTH: tl.constexpr, SLOT: tl.constexpr):
    """y = fp16(gelu(acc + b)) over these WIDTH columns (up to the padded row width); per row, the max
    and sum of exp(y - max) over the columns below N, stored at slot first_slot of row-major
    (M, slots) arrays, the other WIDTH / SLOT - 1 slots these columns cover (-inf, 0).
    Rows are offsets from row0 inside the tile, cols absolute columns: the int64 part of y's
    address is one scalar base, the per-element offsets are int32."""
    LOG2E: tl.constexpr = 1.4426950408889634
    offs_m = row0 + rows
    m_mask = offs_m < M
    n_mask = cols < N
    v = acc + tl.load(b_ptr + cols, mask=n_mask, other=0.0).to(tl.float32)[None, :]
    g = _half_erfc_gelu(v).to(y_ptr.dtype.element_ty)
    y_tile = y_ptr + row0.to(tl.int64) * width
    tl.store(y_tile + rows[:, None] * width + cols[None, :], g,
             mask=m_mask[:, None] & (cols[None, :] < width))

    gf = tl.where(n_mask[None, :], g.to(tl.float32), float("-inf"))
    row_max = tl.max(gf, axis=1)
    safe_max = tl.where(row_max == float("-inf"), 0.0, row_max)  # a split tile's chunk wholly past N
    row_sum = tl.sum(tl.exp2((gf - safe_max[:, None]) * LOG2E), axis=1)
    PER: tl.constexpr = WIDTH // SLOT
    local = tl.arange(0, PER)
    slot = first_slot + local
    first = (local == 0)[None, :]
    at = offs_m[:, None] * slots + slot[None, :]
    mask = m_mask[:, None] & (slot[None, :] < slots)
    tl.store(max_ptr + at, tl.where(first, row_max[:, None], float("-inf")), mask=mask)
    tl.store(sum_ptr + at, tl.where(first, row_sum[:, None], 0.0), mask=mask)


@triton.jit
def _tile_epilogue(acc, row0, col0, pid_n, b_ptr, y_ptr, max_ptr, sum_ptr, M, N, width, slots,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, SLOT: tl.constexpr, HALVES: tl.constexpr):
    """A whole tile's epilogue; with HALVES, one column half after the other (each a whole number of
    slots), which keeps the 128x128 tile under the 128-register cap of two programs per SM."""
    PER_TILE: tl.constexpr = BLOCK_N // SLOT
    rows = tl.arange(0, BLOCK_M)
    if HALVES:
        HALF: tl.constexpr = BLOCK_N // 2
        acc0, acc1 = tl.split(tl.permute(tl.reshape(acc, (BLOCK_M, 2, HALF)), (0, 2, 1)))
        _gelu_stats_store(acc0, row0, rows, col0 + tl.arange(0, HALF), b_ptr, y_ptr, max_ptr, sum_ptr, M, N,
                          width, slots, pid_n * PER_TILE, HALF, SLOT)
        _gelu_stats_store(acc1, row0, rows, col0 + HALF + tl.arange(0, HALF), b_ptr, y_ptr, max_ptr, sum_ptr,
                          M, N, width, slots, pid_n * PER_TILE + HALF // SLOT, HALF, SLOT)
    else:
        _gelu_stats_store(acc, row0, rows, col0 + tl.arange(0, BLOCK_N), b_ptr, y_ptr, max_ptr, sum_ptr, M, N,
                          width, slots, pid_n * PER_TILE, BLOCK_N, SLOT)


@triton.autotune(configs=_CONFIGS, key=["M", "N", "k_units"])
@triton.heuristics(_HEURISTICS)
@triton.jit
def linear_gelu_stats_kernel(
    x_desc, w_desc, x_ptr, w_ptr, b_ptr, y_ptr, max_ptr, sum_ptr, ws_ptr,
    M, N, k_units, xm_units, wn_units, width_units, slots, sms, full_tiles,
    UNIT: tl.constexpr, SLOT: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    PER_SM: tl.constexpr, TMA: tl.constexpr, HALVES: tl.constexpr, SPLIT: tl.constexpr, EVEN_K: tl.constexpr,
):
    """y = fp16(gelu(x @ W.T + b)) into rows of `width` elements, with the row partials of
    _gelu_stats_store; programs past full_tiles are pieces of the tail tiles, SPLIT per tile, each
    over its share of the K steps."""
    K = k_units * UNIT
    width = width_units * UNIT
    pid = tl.program_id(0)
    steps = tl.cdiv(K, BLOCK_K)
    if SPLIT > 1:
        in_tail = pid >= full_tiles
        piece = tl.maximum(pid - full_tiles, 0)
        part = piece % SPLIT
        tile = tl.where(in_tail, full_tiles + piece // SPLIT, pid)
        k_lo = tl.where(in_tail, part * steps // SPLIT, 0)
        k_hi = tl.where(in_tail, (part + 1) * steps // SPLIT, steps)
    else:
        tile = pid
        k_lo = 0
        k_hi = steps
    pid_m, pid_n = _tile_coords(tile, M, N, BLOCK_M, BLOCK_N, GROUP_M)
    row0 = pid_m * BLOCK_M
    col0 = pid_n * BLOCK_N

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    if TMA:
        # TMA boxes: rows past M, rows of W past N and the K step past K arrive as zeros
        for k in range(k_lo, k_hi):
            a = x_desc.load([row0, k * BLOCK_K])
            b = w_desc.load([col0, k * BLOCK_K])
            acc = tl.dot(a, b.T, acc)
    else:
        stride_xm = xm_units * UNIT
        stride_wn = wn_units * UNIT
        offs_k = tl.arange(0, BLOCK_K)
        # rows of x and W past the edge read the last valid one (their results are masked at the
        # store or land in y's padding, and are left out of the statistics); int64 tile bases,
        # int32 offsets inside the tile
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

    if SPLIT > 1:
        if pid >= full_tiles:
            # a piece of a split tile: park its fp32 partial for split_tile_epilogue_kernel
            local_m = tl.arange(0, BLOCK_M)
            local_n = tl.arange(0, BLOCK_N)
            tl.store(ws_ptr + piece * (BLOCK_M * BLOCK_N) + local_m[:, None] * BLOCK_N + local_n[None, :], acc)
        else:
            _tile_epilogue(acc, row0, col0, pid_n, b_ptr, y_ptr, max_ptr, sum_ptr, M, N, width, slots,
                           BLOCK_M, BLOCK_N, SLOT, HALVES)
    else:
        _tile_epilogue(acc, row0, col0, pid_n, b_ptr, y_ptr, max_ptr, sum_ptr, M, N, width, slots,
                       BLOCK_M, BLOCK_N, SLOT, HALVES)


@triton.jit
def split_tile_epilogue_kernel(
    ws_ptr, b_ptr, y_ptr, max_ptr, sum_ptr, M, N, width_units, slots, full_tiles,
    UNIT: tl.constexpr, SLOT: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
    GROUP_M: tl.constexpr, SPLIT: tl.constexpr, CHUNK_M: tl.constexpr,
):
    """The epilogue of the split tiles, CHUNK_M x SLOT at a time: the tile's SPLIT fp32 pieces added
    in a fixed order (deterministic), then bias, GELU, the fp16 store and one exact row partial for
    the chunk's slot."""
    tail = tl.program_id(0)
    ROW_PARTS: tl.constexpr = BLOCK_M // CHUNK_M
    c = tl.program_id(1) // ROW_PARTS
    r = tl.program_id(1) % ROW_PARTS * CHUNK_M
    pid_m, pid_n = _tile_coords(full_tiles + tail, M, N, BLOCK_M, BLOCK_N, GROUP_M)
    tile_elems: tl.constexpr = BLOCK_M * BLOCK_N
    local_m = r + tl.arange(0, CHUNK_M)
    local_n = c * SLOT + tl.arange(0, SLOT)
    at = ws_ptr + tail * SPLIT * tile_elems + local_m[:, None] * BLOCK_N + local_n[None, :]
    total = tl.load(at)
    for s in tl.static_range(1, SPLIT):
        total += tl.load(at + s * tile_elems)
    _gelu_stats_store(total, pid_m * BLOCK_M + r, tl.arange(0, CHUNK_M), pid_n * BLOCK_N + local_n, b_ptr, y_ptr,
                      max_ptr, sum_ptr, M, N, width_units * UNIT, slots, pid_n * (BLOCK_N // SLOT) + c, SLOT, SLOT)


@triton.jit
def softmax_rows_kernel(y_ptr, max_ptr, sum_ptr, width_units, slots,
                        UNIT: tl.constexpr, BLOCK: tl.constexpr, BLOCK_S: tl.constexpr):
    """One row: merge its slot partials into the max and 1 / sum of exp(y - max), then y = exp(y - max)
    / sum in place over the padded row (128-bit accesses; the padding is never returned)."""
    LOG2E: tl.constexpr = 1.4426950408889634
    row = tl.program_id(0)
    width = width_units * UNIT
    y_row = y_ptr + row.to(tl.int64) * width
    offs = tl.arange(0, BLOCK)
    g = tl.load(y_row + offs, mask=offs < width, other=0.0)  # in flight while the partials merge

    # running (max, sum) per lane, rescaled element-wise; reduced across lanes once after the loop
    s_offs = tl.arange(0, BLOCK_S)
    best = tl.full((BLOCK_S,), float("-inf"), tl.float32)
    total = tl.zeros((BLOCK_S,), dtype=tl.float32)
    for start in range(0, slots, BLOCK_S):
        s = start + s_offs
        mask = s < slots
        m = tl.load(max_ptr + row * slots + s, mask=mask, other=float("-inf"))
        e = tl.load(sum_ptr + row * slots + s, mask=mask, other=0.0)
        new_best = tl.maximum(best, m)
        safe = tl.where(new_best == float("-inf"), 0.0, new_best)
        total = total * tl.exp2((best - safe) * LOG2E) + e * tl.exp2((m - safe) * LOG2E)
        best = new_best
    row_max = tl.max(best, axis=0)
    row_sum = tl.sum(total * tl.exp2((best - row_max) * LOG2E), axis=0)
    scale = 1.0 / row_sum
    shift = row_max * LOG2E

    y = tl.exp2(g.to(tl.float32) * LOG2E - shift) * scale
    tl.store(y_row + offs, y.to(y_ptr.dtype.element_ty), mask=offs < width)
    for c in range(1, tl.cdiv(width, BLOCK)):
        o = c * BLOCK + offs
        g = tl.load(y_row + o, mask=o < width, other=0.0)
        y = tl.exp2(g.to(tl.float32) * LOG2E - shift) * scale
        tl.store(y_row + o, y.to(y_ptr.dtype.element_ty), mask=o < width)


@triton.jit
def pad_rows_kernel(src_ptr, dst_ptr, R, K, stride_src, padded_units,
                    BLOCK_R: tl.constexpr, BLOCK_K: tl.constexpr, UNIT: tl.constexpr):
    padded = padded_units * UNIT
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.program_id(1) * BLOCK_K + tl.arange(0, BLOCK_K)
    row_mask = rows[:, None] < R
    value = tl.load(src_ptr + rows.to(tl.int64)[:, None] * stride_src + cols[None, :],
                    mask=row_mask & (cols[None, :] < K), other=0.0)
    tl.store(dst_ptr + rows.to(tl.int64)[:, None] * padded + cols[None, :], value,
             mask=row_mask & (cols[None, :] < padded))


def _aligned_rows(t):
    """``t`` itself when its rows start on 16-byte boundaries and hold whole 16-byte units (what TMA
    and 16-byte cp.async need), else a copy whose rows are zero-padded to the next multiple of UNIT
    elements."""
    rows, cols = t.shape
    if cols % UNIT == 0 and t.stride(0) % UNIT == 0 and t.stride(1) == 1 and t.data_ptr() % 16 == 0:
        return t
    padded = triton.cdiv(cols, UNIT) * UNIT
    out = torch.empty((rows, padded), device=t.device, dtype=t.dtype)
    pad_rows_kernel[(triton.cdiv(rows, 16), triton.cdiv(padded, 256))](
        t, out, rows, cols, t.stride(0), padded // UNIT, BLOCK_R=16, BLOCK_K=256, UNIT=UNIT, num_warps=4)
    return out


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
        x, w = _aligned_rows(x), _aligned_rows(w)
        K = x.shape[1]  # padded with zeros where needed, which add nothing to the product
        width = triton.cdiv(N, UNIT) * UNIT  # y's rows padded to whole 16-byte units
        sms = _sm_count(x.device)
        ws = torch.empty((_workspace_elements(M, N, K, sms),), device=x.device, dtype=torch.float32)

        y = torch.empty((M, width), device=x.device, dtype=x.dtype)
        slots = triton.cdiv(N, SLOT)
        part_max = torch.empty((M, slots), device=x.device, dtype=torch.float32)
        part_sum = torch.empty((M, slots), device=x.device, dtype=torch.float32)
        # block shapes are set per config by _set_blocks
        x_desc = TensorDescriptor(x, [M, K], [x.stride(0), 1], [64, 64])
        w_desc = TensorDescriptor(w, [N, K], [w.stride(0), 1], [64, 64])
        linear_gelu_stats_kernel[_grid(M, N, K, sms)](
            x_desc, w_desc, x, w, b, y, part_max, part_sum, ws, M, N, K // UNIT, x.stride(0) // UNIT,
            w.stride(0) // UNIT, width // UNIT, slots, sms, UNIT=UNIT, SLOT=SLOT)
        # the tile the autotuner ran (set by every Autotuner.run; a capture that bypasses it gets the first)
        config = getattr(linear_gelu_stats_kernel, "best_config", None) or linear_gelu_stats_kernel.configs[0]
        bm, bn = config.kwargs["BLOCK_M"], config.kwargs["BLOCK_N"]
        tiles, full, split = _schedule(M, N, K, bm, bn, config.kwargs["BLOCK_K"], _slots(sms, config.kwargs["PER_SM"]))
        if split > 1:
            chunk_m = min(bm, 64)
            split_tile_epilogue_kernel[(tiles - full, (bn // SLOT) * (bm // chunk_m))](
                ws, b, y, part_max, part_sum, M, N, width // UNIT, slots, full, UNIT=UNIT, SLOT=SLOT,
                BLOCK_M=bm, BLOCK_N=bn, GROUP_M=config.kwargs["GROUP_M"], SPLIT=split, CHUNK_M=chunk_m, num_warps=4)

        block = min(triton.next_power_of_2(width), 8192)
        softmax_rows_kernel[(M,)](y, part_max, part_sum, width // UNIT, slots, UNIT=UNIT, BLOCK=block,
                                  BLOCK_S=min(triton.next_power_of_2(slots), 256),
                                  num_warps=max(1, min(8, block // 512)))
        return y if width == N else y[:, :N]
