"""Linear - subtract * multiply + ReLU: round 4's TMA tiles and tail split, plus configs for rows
that are not whole 128-byte lines, where x is first copied into rows padded to whole K steps, and
output rows padded to a multiple of 8 so that every store is 16 bytes.

Round 4's best runs cases 0-1 at 87-91% of the roofline but 1000 x 5000 -> 7000 at 57% (0.161 ms,
"latency-bound, no finding"). Its tiles account for part of that: the autotuner runs 256x128 there
(the run's rung-3 launch fact: 220 programs, 1.667 waves on 132 SMs), so two waves of 79 K steps, the
last step 8 of 64 columns (a 17% idle tail; the tail is too large to split in one wave of pieces,
and splitting it over two would write 34 MB of fp32 partials to save 25 steps); M and N padding
cost 2.4% and 0.6%, the epilogue is case 0's. Its K steps account for the rest: 0.161 ms / 158
steps is about 1.02 us a step, where case 0's 256 tiles of the same 256x128 config take 0.198 ms
/ 256 steps = 0.77 us. What sets case 3 apart is K = 5000: x's and W's rows are 10000 bytes apart,
16 bytes off a 32-byte sector on every other row and off a 128-byte line on 7 rows of 8, so the
128-byte rows of each TMA box (x_desc / w_desc loads in the K loop) read 5 sectors instead of 4 on
half the rows, across two lines on most; aligned K (cases 0-2, 4) has none of that. What changed:
- where x's rows are not whole 128-byte lines, new TMA configs (PAD_X) read x from a copy whose
  rows are padded to a multiple of 64 elements (5000 -> 5056: every x box row on a 128-byte line);
  only x is copied (10 MB, some 7 us on an H100, against 70 MB for W), and at 256x128 x is 256 of
  the 384 box rows each K step reads, so two thirds of the split lines go. The descriptor keeps
  x's K extent, so the hardware still zero-fills past K and the pad columns are never written or
  read. pad_x_kernel runs in the config's pre_hook, which the autotuner runs inside every timed
  call of the config: the copy is timed together with the GEMM it enables, and a PAD_X config is
  kept only where the faster K loop pays for it;
- on those shapes the 256x128 tile also comes with 4 stages (197 kB of shared memory), with and
  without PAD_X, for a K loop the brief calls latency-bound: one more TMA box pair in flight;
- shapes whose x rows are whole 128-byte lines (cases 0-2 and 4) prune the new configs and run
  round 4's six configs;
- the output is allocated with rows padded to a multiple of 8 and returned as a view of its real
  columns: 3333 x 4096 -> 2047 (case 4, 71% of the roofline) stored one fp16 at a time into its
  2-byte-aligned 2047-wide rows (Y_UNIT = 1: `ladder ir --case 4` shows 16-bit st.global on every
  config, and the 128x256 tile the autotuner runs there at 255 registers with 352 B spilled);
  with 2048-wide rows every store is 16 bytes and 128x256 compiles as on the aligned cases (no
  spills). The bias is masked at the real width; the one extra column is computed and not returned.
Kept from round 4: operands through TMA descriptors (hardware zero fill past M, N and K), the
tiles past the last whole wave split along K where one wave of pieces fills the idle SMs (fp32
partials added in a fixed order by split_tile_relu_kernel), the epilogue max(acc * m + (b - s) * m,
0) on the fp32 accumulator with one fp16 rounding, GROUP_M-grouped tile order, the 16-byte cp.async
configs beside the TMA ones.
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
K_STEP = 64  # BLOCK_K of every config: PAD_X pads x's rows to a multiple of it (128-byte lines)
LINE_UNITS = 8  # 16-byte units per 128-byte line
PAD_ROWS, PAD_COLS = 32, 256  # block of pad_x_kernel (16 kB a program)


def _set_blocks(nargs):
    """The descriptors' block shapes follow the config (TMA boxes of BLOCK_M x BLOCK_K, BLOCK_N x BLOCK_K)."""
    nargs["x_desc"].block_shape = [nargs["BLOCK_M"], nargs["BLOCK_K"]]
    nargs["w_desc"].block_shape = [nargs["BLOCK_N"], nargs["BLOCK_K"]]
    if nargs["xp_desc"] is not None:  # (None where x's rows are whole lines: no PAD_X config runs)
        nargs["xp_desc"].block_shape = [nargs["BLOCK_M"], nargs["BLOCK_K"]]


def _pad_then_set_blocks(nargs):
    """Pre-hook of the PAD_X configs: copy x into the line-aligned rows xp_desc describes, then set
    the block shapes. The autotuner runs it inside each timed call of the config, so the copy is
    timed with the GEMM it enables."""
    if nargs["xp_desc"] is not None:
        _pad_x(nargs["x_ptr"], nargs["xp_desc"].base)
    _set_blocks(nargs)


def _configs():
    # (BLOCK_M, BLOCK_N, BLOCK_K, stages, warps, programs per SM on sm_90 from the IR's occupancy, TMA,
    #  PAD_X, ODD_ONLY); ODD_ONLY configs run only where x's rows are not whole 128-byte lines
    shapes = [(128, 256, 64, 3, 8, 1, True, False, False), (256, 128, 64, 3, 8, 1, True, False, False),
              (128, 128, 64, 4, 8, 1, True, False, False), (128, 128, 64, 3, 8, 2, True, False, False),
              (128, 256, 64, 3, 8, 1, False, False, False), (128, 128, 64, 4, 8, 1, False, False, False),
              # new: x through line-aligned rows, and a fourth stage for the 256x128 tile
              (256, 128, 64, 3, 8, 1, True, True, True), (256, 128, 64, 4, 8, 1, True, True, True),
              (128, 256, 64, 3, 8, 1, True, True, True), (256, 128, 64, 4, 8, 1, True, False, True)]
    return [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8, "PER_SM": p, "TMA": tma,
                           "PAD_X": pad, "ODD_ONLY": odd},
                          num_stages=s, num_warps=w, pre_hook=_pad_then_set_blocks if pad else _set_blocks)
            for m, n, k, s, w, p, tma, pad, odd in shapes]


def _odd_rows(xm_units):
    """Whether x's rows (xm_units 16-byte units apart) are not whole 128-byte lines."""
    return xm_units % LINE_UNITS != 0


def _prune(configs, named_args, **kwargs):
    """The new configs only where x's rows are not whole 128-byte lines (elsewhere PAD_X is the
    same GEMM plus a copy, and the round-4 configs are kept as they were timed)."""
    odd = _odd_rows(named_args["xm_units"])
    return [c for c in configs if odd or not c.kwargs["ODD_ONLY"]]


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
    # the config's PAD_X, off where there is no padded copy (x's rows whole lines: pruned unless forced)
    "PAD_X": lambda a: a["PAD_X"] and a["xp_desc"] is not None,
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
def _epilogue_store(acc, row0, rows, cols, b_ptr, y_ptr, M, N, n_out, stride_y, sub, mul):
    """y[row0 + rows, cols] = fp16(max((acc + b - sub) * mul, 0)), as acc * mul + (b - sub) * mul (one
    FMA per element); rows are offsets from row0 inside the tile, cols absolute columns. The bias
    exists for the n_out real columns; y's rows are N >= n_out wide (a multiple of Y_UNIT), so the
    store's mask is constant over every Y_UNIT columns and each store is as wide as that allows."""
    shift = (tl.load(b_ptr + cols, mask=cols < n_out, other=0.0).to(tl.float32) - sub) * mul
    y = tl.maximum(acc * mul + shift[None, :], 0.0).to(y_ptr.dtype.element_ty)
    y_tile = y_ptr + row0.to(tl.int64) * stride_y  # int64 base, int32 offsets inside the tile
    tl.store(y_tile + rows[:, None] * stride_y + cols[None, :], y,
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


@triton.autotune(configs=_CONFIGS, key=["M", "n_units", "k_units", "xm_units", "sms"],
                 prune_configs_by={"early_config_prune": _prune})
@triton.heuristics(_HEURISTICS)
@triton.jit
def linear_sub_mul_relu_kernel(
    x_desc, w_desc, xp_desc, x_ptr, w_ptr, b_ptr, y_ptr, ws_ptr,
    M, n_out, n_units, k_units, xm_units, wn_units, ym_units, sub, mul, sms, full_tiles,
    UNIT: tl.constexpr, Y_UNIT: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    PER_SM: tl.constexpr, TMA: tl.constexpr, PAD_X: tl.constexpr, ODD_ONLY: tl.constexpr,
    SPLIT: tl.constexpr, EVEN_K: tl.constexpr,
):
    """y = fp16(relu((x @ W.T + b - sub) * mul)) for whole tiles; programs past full_tiles are pieces
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
        # TMA boxes: rows past M, columns past N and K steps past K arrive as zeros. PAD_X reads
        # x from the copy whose rows are whole 128-byte lines (same K extent: zeros past K).
        if PAD_X:
            a_desc = xp_desc
        else:
            a_desc = x_desc
        for k in range(k_lo, k_hi):
            a = a_desc.load([row0, k * BLOCK_K])
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
            # a piece of a split tile: park its fp32 partial for split_tile_relu_kernel
            local_m = tl.arange(0, BLOCK_M)
            local_n = tl.arange(0, BLOCK_N)
            tl.store(ws_ptr + (pid - full_tiles) * (BLOCK_M * BLOCK_N) + local_m[:, None] * BLOCK_N
                     + local_n[None, :], acc)
        else:
            _epilogue_store(acc, row0, rows_out, cols_out, b_ptr, y_ptr, M, N, n_out, stride_y, sub, mul)
    else:
        _epilogue_store(acc, row0, rows_out, cols_out, b_ptr, y_ptr, M, N, n_out, stride_y, sub, mul)


@triton.jit
def split_tile_relu_kernel(
    ws_ptr, b_ptr, y_ptr, M, n_out, n_units, ym_units, sub, mul, full_tiles,
    Y_UNIT: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr,
    SPLIT: tl.constexpr, CHUNK: tl.constexpr,
):
    """The epilogue of the split tiles, CHUNK x CHUNK at a time: the tile's SPLIT fp32 pieces added
    in a fixed order (deterministic), then bias, subtraction, scale, ReLU and the fp16 store."""
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
                    M, N, n_out, ym_units * Y_UNIT, sub, mul)


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
def pad_x_kernel(src_ptr, dst_ptr, R, k_units, src_units, dst_units,
                 UNIT: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """dst[rows, :K] = src[rows, :K] into rows dst_units 16-byte units apart; K and the strides in
    16-byte units, so every load and store is 16 bytes with a mask constant over each. The columns
    past K are left unwritten: xp_desc's K extent stops there and TMA fills zeros."""
    K = k_units * UNIT
    stride = src_units * UNIT
    width = dst_units * UNIT
    row0 = tl.program_id(0) * BLOCK_R
    rows = tl.arange(0, BLOCK_R)  # offsets from row0 (int64 block bases, int32 offsets inside)
    cols = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    mask = (row0 + rows < R)[:, None] & (cols < K)[None, :]
    value = tl.load(src_ptr + row0.to(tl.int64) * stride + rows[:, None] * stride + cols[None, :], mask=mask)
    tl.store(dst_ptr + row0.to(tl.int64) * width + rows[:, None] * width + cols[None, :], value, mask=mask)


def _pad_x(x, xp):
    """Launch pad_x_kernel: x (M x K, rows 16-byte aligned: see _aligned_rows) into xp's rows."""
    M, K = x.shape
    grid = (triton.cdiv(M, PAD_ROWS), triton.cdiv(K, PAD_COLS))
    pad_x_kernel[grid](x, xp, M, K // UNIT, x.stride(0) // UNIT, xp.stride(0) // UNIT,
                       UNIT=UNIT, BLOCK_R=PAD_ROWS, BLOCK_C=PAD_COLS, num_warps=4)


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
    def __init__(self, in_features, out_features, subtract_value, multiply_value):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, dtype=torch.float16)
        self.subtract_value = subtract_value
        self.multiply_value = multiply_value

    def forward(self, x):
        M = x.shape[0]
        w, b = self.linear.weight, self.linear.bias
        N = w.shape[0]
        x, w = _aligned_rows(x), _aligned_rows(w)
        K = x.shape[1]  # padded with zeros where needed, which add nothing to the product
        dev = x.device
        sms = _sm_count(dev)
        sub, mul = self.subtract_value, self.multiply_value
        # rows as wide as the next multiple of 8 (16-byte stores); the view returned leaves the
        # extra columns out
        n_padded = triton.cdiv(N, UNIT) * UNIT
        y = torch.empty((M, n_padded), device=dev, dtype=x.dtype)
        y_unit = _unit(y)
        ws = torch.empty((_workspace_elements(M, n_padded, K, sms),), device=dev, dtype=torch.float32)
        # block shapes are set per config by _set_blocks
        x_desc = TensorDescriptor(x, [M, K], [x.stride(0), 1], [64, 64])
        w_desc = TensorDescriptor(w, [N, K], [w.stride(0), 1], [64, 64])
        if _odd_rows(x.stride(0) // UNIT):
            # x's rows padded to whole K steps (128-byte lines) for the PAD_X configs, whose pre-hook
            # fills them; the descriptor keeps x's K extent (zero fill past K, pad columns unread)
            xp = torch.empty((M, triton.cdiv(K, K_STEP) * K_STEP), device=dev, dtype=x.dtype)
            xp_desc = TensorDescriptor(xp, [M, K], [xp.stride(0), 1], [64, 64])
        else:
            xp_desc = None  # no PAD_X config runs (pruned); None compiles to a constant
        linear_sub_mul_relu_kernel[_grid(M, n_padded, K, sms)](
            x_desc, w_desc, xp_desc, x, w, b, y, ws, M, N, n_padded // y_unit, K // UNIT, x.stride(0) // UNIT, w.stride(0) // UNIT,
            y.stride(0) // y_unit, sub, mul, sms, UNIT=UNIT, Y_UNIT=y_unit)
        # the tile the autotuner ran (set by every Autotuner.run; a capture that bypasses it gets the first)
        config = getattr(linear_sub_mul_relu_kernel, "best_config", None) or linear_sub_mul_relu_kernel.configs[0]
        bm, bn = config.kwargs["BLOCK_M"], config.kwargs["BLOCK_N"]
        tiles, full, split = _schedule(M, n_padded, K, bm, bn, config.kwargs["BLOCK_K"],
                                       _slots(sms, config.kwargs["PER_SM"]))
        if split > 1:
            split_tile_relu_kernel[(tiles - full, (bm // CHUNK) * (bn // CHUNK))](
                ws, b, y, M, N, n_padded // y_unit, y.stride(0) // y_unit, sub, mul, full, Y_UNIT=y_unit,
                BLOCK_M=bm, BLOCK_N=bn, GROUP_M=config.kwargs["GROUP_M"], SPLIT=split, CHUNK=CHUNK, num_warps=4)
        return y if n_padded == N else y[:, :N]
