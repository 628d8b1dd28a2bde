"""Linear + Mish + Mish: round 3's TMA main loop, and beside its configs persistent ones, one program
per SM walking its tiles in a loop flattened with the K loop, for the autotuner to take where the K
loop is short.

The best (round 3, 2.462x over the initial version) runs its two 8192-wide cases at 83% of the
roofline and three at 42-63%. Its brief's evidence on two of those, from rung 1 as it reads the
kernel now (the walk follows the epilogue's `tl.split`, so the GEMM checks see this kernel):
nv.short-k-loop on 4096 x 1024 -> 8192 (latency-bound, 51% in the gate): each program computes one
128x256 tile in 16 K steps, and its fill and epilogue (64 kB of output, both Mish on 32k fp32
values in two halves) leave only 83% of its time to the K loop, with nothing else on the SM while
they run; 8191 x 2048 -> 2048 (32 K steps, 63%) has the same shape of program with twice the loop.
What changed, the finding's own fix:
- persistent configs (`PERSIST`): SMs x PER_SM programs, each walking tiles in grouped order with
  `tl.range(pid, tiles, programs, flatten=True)`, so the compiler fuses the tile loop and the K loop
  into one software-pipelined loop and the next tile's TMA loads are in flight while this tile's
  epilogue runs; 128x256 at one program per SM (253 registers, 181 kB of shared memory, no spills
  compiled for sm_90) and 128x128 at one (four stages) and two (two stages, 83 kB each, so one
  program's epilogue runs beside the other's K loop, the finding's other fix). No split tails (a
  persistent walk has no idle last wave to fill), so these carry no split code;
- the non-persistent configs stay, and the autotuner times both kinds per shape (its key is M, N, K):
  the long-K cases, whose K loops already hold 95% of a program's time, keep whichever is faster.
Kept from round 3: operands through TMA descriptors (zero fill past M, N and K), the cp.async configs
beside them, output rows padded to a multiple of 8 and returned as a view, x and W padded only where
their rows are not 16-byte aligned, split tails for the non-persistent tiles, bias and both Mish on
the fp32 accumulator in two column halves, one exponential each, one fp16 rounding.
- mish(v) = v tanh(softplus(v)) uses tanh(log(1 + t)) = n / (n + 2), n = t (t + 2), t = e^v, with t
  taken at min(v, 20) (where the ratio is 1 in fp32) so nothing overflows.
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
    # (BLOCK_M, BLOCK_N, BLOCK_K, stages, warps, programs per SM on sm_90 from the IR's occupancy, TMA, PERSIST)
    shapes = [(128, 256, 64, 3, 8, 1, True, False), (256, 128, 64, 3, 8, 1, True, False),
              (128, 128, 64, 4, 8, 1, True, False), (128, 128, 64, 3, 8, 2, True, False),
              (128, 256, 64, 3, 8, 1, False, False), (128, 128, 64, 4, 8, 1, False, False),
              (128, 256, 64, 3, 8, 1, True, True), (128, 128, 64, 4, 8, 1, True, True),
              (128, 128, 64, 2, 8, 2, True, True)]
    return [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8, "PER_SM": p, "TMA": tma,
                           "PERSIST": persist}, num_stages=s, num_warps=w, pre_hook=_set_blocks)
            for m, n, k, s, w, p, tma, persist in shapes]


_CONFIGS = _configs()


def _schedule(M, N, K, block_m, block_n, block_k, slots, persist=False):
    """(tiles, whole tiles, pieces per split tile): the tiles past the last whole wave of `slots`
    programs are split along K so that they fill the machine, when that gives each piece enough
    K steps. A persistent walk splits nothing."""
    tiles = triton.cdiv(M, block_m) * triton.cdiv(N, block_n)
    tail = tiles % slots
    if tail == 0 or persist:
        return tiles, tiles, 1
    split = min(slots // tail, triton.cdiv(K, block_k) // MIN_STEPS, MAX_SPLIT)
    if split < 2:
        return tiles, tiles, 1
    return tiles, tiles - tail, split


def _slots(sms, per_sm):
    return max(1, sms * per_sm)


def _args_schedule(a):
    return _schedule(a["M"], a["n_units"] * UNIT, a["k_units"] * UNIT, a["BLOCK_M"], a["BLOCK_N"],
                     a["BLOCK_K"], _slots(a["sms"], a["PER_SM"]), a["PERSIST"])


_HEURISTICS = {
    "full_tiles": lambda a: _args_schedule(a)[1],
    "SPLIT": lambda a: _args_schedule(a)[2],
    "EVEN_K": lambda a: (a["k_units"] * UNIT) % a["BLOCK_K"] == 0,
}


def _grid(M, N, K, sms):
    def grid(meta):
        slots = _slots(sms, meta["PER_SM"])
        tiles, full, split = _schedule(M, N, K, meta["BLOCK_M"], meta["BLOCK_N"], meta["BLOCK_K"], slots,
                                       meta["PERSIST"])
        if meta["PERSIST"]:
            return (min(tiles, slots),)
        return (full + (tiles - full) * split,)
    return grid


def _workspace_elements(M, N, K, sms):
    """fp32 elements of partial tiles the largest schedule of any config needs for this shape."""
    most = 1
    for c in _CONFIGS:
        bm, bn = c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"]
        tiles, full, split = _schedule(M, N, K, bm, bn, c.kwargs["BLOCK_K"], _slots(sms, c.kwargs["PER_SM"]),
                                       c.kwargs["PERSIST"])
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
def _epilogue_store_halves(acc, row0, rows, col0, b_ptr, y_ptr, M, N, n_out, stride_y, BLOCK_N: tl.constexpr):
    """The epilogue of a whole tile in two column halves: the whole tile's Mish temporaries spill
    at 128x256."""
    HALF: tl.constexpr = BLOCK_N // 2
    acc0, acc1 = tl.split(tl.permute(tl.reshape(acc, (acc.shape[0], 2, HALF)), (0, 2, 1)))
    _epilogue_store(acc0, row0, rows, col0 + tl.arange(0, HALF), b_ptr, y_ptr, M, N, n_out, stride_y)
    _epilogue_store(acc1, row0, rows, col0 + HALF + tl.arange(0, HALF), b_ptr, y_ptr, M, N, n_out, stride_y)


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
def linear_mish_mish_kernel(
    x_desc, w_desc, x_ptr, w_ptr, b_ptr, y_ptr, ws_ptr,
    M, n_out, n_units, k_units, xm_units, wn_units, ym_units, sms, full_tiles,
    UNIT: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    PER_SM: tl.constexpr, TMA: tl.constexpr, PERSIST: tl.constexpr, SPLIT: tl.constexpr, EVEN_K: tl.constexpr,
):
    """y = fp16(epilogue(x @ W.T + b)) for whole tiles; programs past full_tiles are pieces
    of the tail tiles, SPLIT per tile, each over its share of the K steps, parking fp32 partials.
    PERSIST: each program walks tiles (TMA operands, no split) in one loop fused with the K loop."""
    N = n_units * UNIT
    K = k_units * UNIT
    pid = tl.program_id(0)
    steps = tl.cdiv(K, BLOCK_K)
    if PERSIST:
        tiles = tl.cdiv(M, BLOCK_M) * tl.cdiv(N, BLOCK_N)
        for tile in tl.range(pid, tiles, tl.num_programs(0), flatten=True):
            pid_m, pid_n = _tile_coords(tile, M, N, BLOCK_M, BLOCK_N, GROUP_M)
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for k in range(steps):
                a = x_desc.load([pid_m * BLOCK_M, k * BLOCK_K])
                b = w_desc.load([pid_n * BLOCK_N, k * BLOCK_K])
                acc = tl.dot(a, b.T, acc)
            _epilogue_store_halves(acc, pid_m * BLOCK_M, tl.arange(0, BLOCK_M), pid_n * BLOCK_N, b_ptr, y_ptr,
                                   M, N, n_out, ym_units * UNIT, BLOCK_N)
    else:
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
        stride_y = ym_units * UNIT
        if SPLIT > 1:
            if pid >= full_tiles:
                # a piece of a split tile: park its fp32 partial for split_tile_mish_kernel
                local_m = tl.arange(0, BLOCK_M)
                local_n = tl.arange(0, BLOCK_N)
                tl.store(ws_ptr + (pid - full_tiles) * (BLOCK_M * BLOCK_N) + local_m[:, None] * BLOCK_N
                         + local_n[None, :], acc)
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
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, dtype=torch.float16)

    def forward(self, x):
        M = x.shape[0]
        w, b = self.linear.weight, self.linear.bias
        N = w.shape[0]
        x, w = _aligned_rows(x), _aligned_rows(w)
        K = x.shape[1]  # padded with zeros where needed, which add nothing to the product
        dev = x.device
        sms = _sm_count(dev)
        # rows as wide as the next multiple of 8 (16-byte stores); the view returned leaves the
        # extra columns out
        n_padded = triton.cdiv(N, UNIT) * UNIT
        y = torch.empty((M, n_padded), device=dev, dtype=x.dtype)
        ws = torch.empty((_workspace_elements(M, n_padded, K, sms),), device=dev, dtype=torch.float32)
        # block shapes are set per config by _set_blocks
        x_desc = TensorDescriptor(x, [M, K], [x.stride(0), 1], [64, 64])
        w_desc = TensorDescriptor(w, [N, K], [w.stride(0), 1], [64, 64])
        linear_mish_mish_kernel[_grid(M, n_padded, K, sms)](
            x_desc, w_desc, x, w, b, y, ws, M, N, n_padded // UNIT, K // UNIT, x.stride(0) // UNIT,
            w.stride(0) // UNIT, y.stride(0) // UNIT, sms, UNIT=UNIT)
        # the tile the autotuner ran (set by every Autotuner.run; a capture that bypasses it gets the first)
        config = getattr(linear_mish_mish_kernel, "best_config", None) or linear_mish_mish_kernel.configs[0]
        bm, bn = config.kwargs["BLOCK_M"], config.kwargs["BLOCK_N"]
        tiles, full, split = _schedule(M, n_padded, K, bm, bn, config.kwargs["BLOCK_K"],
                                       _slots(sms, config.kwargs["PER_SM"]), config.kwargs["PERSIST"])
        if split > 1:
            split_tile_mish_kernel[(tiles - full, (bm // CHUNK) * (bn // CHUNK))](
                ws, b, y, M, N, n_padded // UNIT, y.stride(0) // UNIT, full, UNIT=UNIT,
                BLOCK_M=bm, BLOCK_N=bn, GROUP_M=config.kwargs["GROUP_M"], SPLIT=split, CHUNK=CHUNK, num_warps=4)
        return y if n_padded == N else y[:, :N]
