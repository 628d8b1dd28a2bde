"""Linear + GELU + softmax: the GEMM's epilogue writes the fp16 GELU into the output and per-64-column
row partials (max, sum of exp); the tiles of a last, mostly idle wave are split along K over the idle
SMs; one per-row pass merges a row's partials and normalises it.

Round 1 (1.833x) runs case 3 (M=1000, K=5000, N=5001) at 35% of the roofline. The brief's split puts
90% of that forward in linear_gelu_stats_kernel (launched at best.py:208, 171 us, 39% of its floor),
6% in softmax_normalize_kernel (line 217, 21% of its floor) and 4% in softmax_merge_kernel (line 214,
7.6 us, launch-bound). `ladder ir --facts --case 3` on the best shows why:
- the GEMM's grid is 160 programs of 128x256 = 1.212 waves on 132 SMs (one program per SM, limited by
  registers: 255 regs): the second wave runs 28 tiles for as long as a full one while 104 SMs idle,
  2 waves of time for 1.21 of work; every other tile shape is one to two programs per SM and 2.4
  waves (3 of time). Its loads are 128-bit cp.async and its loop pipelined: the loss is the
  schedule. Here the first floor(tiles / slots) * slots tiles (slots = SMs x programs per SM for the
  config) run whole, as before, and each tile of the partial wave is split along K into
  S = min(slots // tail, K steps // 4, 8) pieces: case 3 at 128x256 runs 132 whole tiles, then
  28 x 4 pieces of 19-20 K steps (the tail takes about a quarter of a tile-time instead of a whole
  one). A piece only parks its fp32 partial in a workspace (15 MB on case 3, in L2);
  split_tile_epilogue_kernel then adds each split tile's pieces in a fixed order (deterministic,
  no atomics) and runs the epilogue 64 x 64 at a time (224 programs on case 3), writing exact
  per-slot partials. In-kernel, a last-arriving piece running that epilogue made the 128x256 tile
  spill (212 B on sm_90): the piece's only extra work is now the store, and every config compiles
  without spills (128x256: 201 regs). SPLIT is a constexpr of the config and shape (a heuristic,
  the grid and the host's check use the same schedule): where nothing splits (cases 0, 1, 2 and 4
  at 128x256: 256 or 512 tiles, the tail above half a wave) the GEMM is round 1's and the epilogue
  kernel is not launched;
- the output row of 5001 fp16 is not 16-byte aligned, so y's stores were 16-bit st.global (IR fact
  at best.py:102) and the normalise pass could only vectorise through a flat index: y is now
  allocated with rows padded to a multiple of 8 elements (the row stride reaches the kernels in
  8-element units, the padding written by the GEMM and never returned) and a view of its first N
  columns is returned, so every y access is 128-bit;
- softmax_normalize_kernel divided every flat index by N (nv.index-div-mod, line 148: a divsi per
  element) and gathered row_max and row_inv with two 32-bit loads per element (line 151), so it is
  load-instruction-bound at 21% of its floor; softmax_merge_kernel ran 8 programs for 1000 rows
  with a cross-warp max and sum per slot step (nv.loop-carried-reduction, lines 132 and 134). Both
  are replaced by one program per row: it issues the row's 128-bit loads, merges the row's slot
  partials (stored row-major now, so they are one contiguous run) in running (max, sum) vectors
  reduced once after the loop, and writes exp(g - max) / sum: two scalars per row, one launch fewer.
  nv.unfused-epilogue (line 217) is answered as far as it can be: the normalisation needs every
  column tile's statistics of a row, so one fp16 read and write of y remains (2 + 2 + 2 bytes per
  element), but the separate merge launch is gone;
- the epilogue's GELU takes 0.5 * erfc from the same Abramowitz-Stegun form with the halving folded
  into the coefficients and exp(-v^2 / 2) as one exp2 of v * v (fewer instructions per element,
  which matters most where K = 2048 and the epilogue is a larger share of each tile); K steps are
  unmasked where BLOCK_K divides K and the operands' edge rows are clamped rather than masked.
Kept from round 1: GELU rounded once to fp16 and statistics taken from the rounded values, per-64-
column slots, K and strides in 8-element units (x and W padded only where K % 8 != 0), autotuned
Hopper tiles in GROUP_M-grouped order, the configs that spill in this epilogue left out.
"""
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl

UNIT = 8  # fp16 elements per 16 bytes
SLOT = 64  # columns per softmax partial; also the width of a split tile's epilogue chunks
MIN_STEPS = 4  # fewest K steps a piece of a split tile gets
MAX_SPLIT = 8  # most pieces a tile is split into (its epilogue reads them all back)


def _configs():
    # (BLOCK_M, BLOCK_N, BLOCK_K, stages, warps, programs per SM on sm_90 from the IR's occupancy).
    # 256x128 (8 warps) and 128x128 (4 warps) spill in the GELU + row-statistics epilogue: left out.
    shapes = [(128, 256, 64, 3, 8, 1), (128, 128, 64, 4, 8, 1), (64, 256, 64, 4, 8, 1), (64, 128, 64, 4, 4, 2),
              (128, 64, 64, 4, 4, 2)]
    return [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8, "PER_SM": p},
                          num_stages=s, num_warps=w)
            for m, n, k, s, w, p in shapes]


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
    for c in _configs():
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
def _gelu_stats_store(acc, offs_m, offs_n, b_ptr, y_ptr, max_ptr, sum_ptr, M, N, width, slots, first_slot,
                      WIDTH: tl.constexpr, SLOT: tl.constexpr):
    """y = fp16(gelu(acc + b)) over these WIDTH columns (up to the padded row width); per row, the max
    and sum of exp(y - max) over the columns below N, stored at slot first_slot of row-major
    (M, slots) arrays, the other WIDTH / SLOT - 1 slots these columns cover (-inf, 0)."""
    LOG2E: tl.constexpr = 1.4426950408889634
    m_mask = offs_m < M
    n_mask = offs_n < N
    v = acc + tl.load(b_ptr + offs_n, mask=n_mask, other=0.0).to(tl.float32)[None, :]
    g = _half_erfc_gelu(v).to(y_ptr.dtype.element_ty)
    tl.store(y_ptr + offs_m.to(tl.int64)[:, None] * width + offs_n[None, :], g,
             mask=m_mask[:, None] & (offs_n[None, :] < width))

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


@triton.autotune(configs=_configs(), key=["M", "N", "k_units"])
@triton.heuristics(_HEURISTICS)
@triton.jit
def linear_gelu_stats_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr, max_ptr, sum_ptr, ws_ptr,
    M, N, k_units, xm_units, wn_units, width_units, slots, sms, full_tiles,
    UNIT: tl.constexpr, SLOT: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    PER_SM: tl.constexpr, SPLIT: tl.constexpr, EVEN_K: tl.constexpr,
):
    """y = fp16(gelu(x @ W.T + b)) into rows of `width` elements, with the row partials of
    _gelu_stats_store; programs past full_tiles are pieces of the tail tiles, SPLIT per tile, each
    over its share of the K steps."""
    K = k_units * UNIT
    stride_xm = xm_units * UNIT
    stride_wn = wn_units * UNIT
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

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    # rows of x and W past the edge read the last valid one (their results are masked at the store
    # or land in y's padding, and are left out of the statistics)
    rows = tl.minimum(offs_m, M - 1).to(tl.int64)
    cols = tl.minimum(offs_n, N - 1).to(tl.int64)
    x_ptrs = x_ptr + rows[:, None] * stride_xm + (k_lo * BLOCK_K + offs_k)[None, :]
    w_ptrs = w_ptr + (k_lo * BLOCK_K + offs_k)[:, None] + cols[None, :] * stride_wn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(k_lo, k_hi):
        if EVEN_K:
            x = tl.load(x_ptrs)
            w = tl.load(w_ptrs)
        else:
            left = K - k * BLOCK_K
            x = tl.load(x_ptrs, mask=offs_k[None, :] < left, other=0.0)
            w = tl.load(w_ptrs, mask=offs_k[:, None] < left, other=0.0)
        acc = tl.dot(x, w, acc)
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K

    PER_TILE: tl.constexpr = BLOCK_N // SLOT
    if SPLIT > 1:
        if pid >= full_tiles:
            # a piece of a split tile: park its fp32 partial for split_tile_epilogue_kernel
            local_m = tl.arange(0, BLOCK_M)
            local_n = tl.arange(0, BLOCK_N)
            tl.store(ws_ptr + piece * (BLOCK_M * BLOCK_N) + local_m[:, None] * BLOCK_N + local_n[None, :], acc)
        else:
            _gelu_stats_store(acc, offs_m, offs_n, b_ptr, y_ptr, max_ptr, sum_ptr, M, N, width, slots,
                              pid_n * PER_TILE, BLOCK_N, SLOT)
    else:
        _gelu_stats_store(acc, offs_m, offs_n, b_ptr, y_ptr, max_ptr, sum_ptr, M, N, width, slots,
                          pid_n * PER_TILE, BLOCK_N, SLOT)


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
    _gelu_stats_store(total, pid_m * BLOCK_M + local_m, pid_n * BLOCK_N + local_n, b_ptr, y_ptr, max_ptr, sum_ptr,
                      M, N, width_units * UNIT, slots, pid_n * (BLOCK_N // SLOT) + c, SLOT, SLOT)


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
    """``t`` itself when its rows start on 16-byte boundaries and hold whole 16-byte units, else a
    copy whose rows are zero-padded to the next multiple of UNIT elements."""
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
        linear_gelu_stats_kernel[_grid(M, N, K, sms)](
            x, w, b, y, part_max, part_sum, ws, M, N, K // UNIT, x.stride(0) // UNIT,
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
