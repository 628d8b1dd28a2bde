"""Linear + scale + residual, round 4: the weight is held with rows padded to whole K steps, so the
PAD configs only copy x; the rest is round 3's best (TMA tiles, tail split, PAD variants).

Evidence (round 4 brief, H200): 5000 x 3000 -> 7001 is the worst unexplained case, 0.3702 ms at
71.8% of its floor (cases 0-2 run at 88-89%). Its split says where the time goes: the GEMM
(linear_scale_residual_kernel, a PAD config) takes 0.3139 ms at 85% of its own floor, pad_k_kernel
0.0565 ms (15% of the forward, at 84% of its memory floor), split_tile_scale_kernel 0.0126 ms. The
PAD GEMM's K steps now cost what case 0's do (0.314 ms / (8.5 waves x 47 steps) = 0.79 us a step;
case 0: 0.7814 ms / (16 waves x 64 steps) = 0.76 us; round 2's unpadded loop, on an H100, about
1.05 us), which supports round 3's hypothesis
(K = 3000 puts operand rows 6000 bytes apart, so TMA box rows straddle 128-byte lines and
32-byte sectors): the line-aligned rows recover the K loop, and what is left of the gap is mostly
the copy that makes them. Of that copy's 144 MB, 84 MB is W (7001 x 3000, read and written), and
W is a parameter: the same values every forward.
What changed:
- ModelNew.__init__ lays the weight out once with rows K_STEP-padded apart: where in_features is
  not a multiple of 64 the nn.Linear weight becomes a Parameter that is a view of the first
  in_features columns of a zeroed (out_features, 3008) buffer. Same shape, same values (copied from
  nn.Linear's own initialisation; load_state_dict copies into the view in place), only the row
  stride differs: every row of a W box starts on a 128-byte line with no copy per forward. The
  kernels already took W's row stride as an argument (wn_units); W's descriptors describe
  [N, K] with stride 3008, so columns past K arrive as TMA zero fill and the buffer's padding is
  never read.
- the PAD configs' pre-hook then copies x only (pad_k_kernel's grid has no W row blocks: on case 3
  157 x 12 programs instead of 376 x 12, 60 MB of traffic instead of 144 MB), and the non-PAD TMA
  and cp.async configs read aligned W rows beside raw x rows: the misaligned boxes drop from
  BLOCK_M + BLOCK_N rows a K step to BLOCK_M (128 of 384 at 128x256) with no copy at all. The
  autotuner times both (pre-hook copy included) and keeps whichever is faster per shape.
- where W's rows are not whole K steps apart (a weight replaced by a dense tensor, or moved with
  .to() into a dense layout), the PAD configs copy W too, exactly as round 3 did. Shapes whose K is
  a multiple of 64 (cases 0-2 and 4) keep a contiguous weight and compile round 3's kernels
  unchanged (same configs, same pruning).
Rejected: caching a padded copy of W between forwards (state keyed on the weight's identity, which
the rules forbid, and stale after an in-place update; the parameter's own layout has neither
problem); two descriptors over x's even and odd rows (12000-byte strides are sector-aligned, but
the odd rows would need a K offset of 8 that W's tile cannot share, so a dot per parity pair);
deeper pipelines on the unpadded loop (the padded loop already runs at case 0's rate per step, so
latency hiding is not what is missing); a persistent kernel for 2048 x 2048 -> 8192 (77.7%, the
other unexplained case: 3.88 waves, a change of schedule with no evidence in this brief, and
29's persistent variant was refused at 0.975x).
Kept from round 3: operands through TMA descriptors (hardware zero fill past M, N and K), the output
allocated 8-padded wide and returned as a view (16-byte stores), y * s + y as one multiply by s + 1
on the fp32 accumulator with the bias, one bf16 rounding, the tiles past the last whole wave split
along K with their fp32 pieces added in a fixed order by split_tile_scale_kernel (deterministic,
no atomics), autotuned Hopper tiles in GROUP_M-grouped order, the 16-byte cp.async configs beside
the TMA ones, the PAD variants pruned where K is whole steps.
"""
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

UNIT = 8  # bf16 elements per 16 bytes
CHUNK = 64  # rows and columns per program of the split tiles' epilogue
MIN_STEPS = 4  # fewest K steps a piece of a split tile gets
MAX_SPLIT = 8  # most pieces a tile is split into (the epilogue reads them all back)
K_STEP = 64  # BLOCK_K of every config: the PAD variants pad K to a multiple of it (128-byte rows)
PAD_ROWS, PAD_COLS = 32, 256  # block of pad_k_kernel (16 kB a program)


def _set_blocks(nargs):
    """The descriptors' block shapes follow the config (TMA boxes of BLOCK_M x BLOCK_K, BLOCK_N x BLOCK_K)."""
    for x_name, w_name in (("x_desc", "w_desc"), ("xp_desc", "wp_desc")):
        if nargs[x_name] is not None:  # (no padded copies where K is whole steps)
            nargs[x_name].block_shape = [nargs["BLOCK_M"], nargs["BLOCK_K"]]
            nargs[w_name].block_shape = [nargs["BLOCK_N"], nargs["BLOCK_K"]]


def _pad_then_set_blocks(nargs):
    """Pre-hook of the PAD configs: copy x into the K-step-padded rows xp_desc describes (and W into
    wp_desc's, unless W's rows are already whole K steps apart: then wp_desc is W itself, as ModelNew
    lays its weight out), then set the block shapes. The autotuner runs it inside each timed call of
    the config, so the copy is timed with the GEMM it enables."""
    if nargs["xp_desc"] is not None:  # (None where K is whole steps: the PAD configs are pruned there)
        w = nargs["w_ptr"]
        wp = nargs["wp_desc"].base if w.stride(0) % K_STEP else None  # None: W read in place
        _pad_k(nargs["x_ptr"], w, nargs["xp_desc"].base, wp)
    _set_blocks(nargs)


def _configs():
    # (BLOCK_M, BLOCK_N, BLOCK_K, stages, warps, programs per SM on sm_90 from the IR's occupancy, TMA)
    # PAD: operands read from the K-step-padded copies (TMA configs only; pruned where K is whole steps)
    shapes = [(128, 256, 64, 3, 8, 1, True), (256, 128, 64, 3, 8, 1, True), (128, 128, 64, 4, 8, 1, True),
              (128, 128, 64, 3, 8, 2, True), (128, 256, 64, 3, 8, 1, False), (128, 128, 64, 4, 8, 1, False)]
    configs = []
    for pad in (False, True):
        for m, n, k, s, w, p, tma in shapes:
            if pad and not tma:
                continue
            configs.append(triton.Config(
                {"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8, "PER_SM": p, "TMA": tma, "PAD": pad},
                num_stages=s, num_warps=w, pre_hook=_pad_then_set_blocks if pad else _set_blocks))
    return configs


_CONFIGS = _configs()


def _prune(configs, named_args, **kwargs):
    """The PAD variants only where K is not a whole number of K steps (elsewhere they are the same
    GEMM plus a copy)."""
    K = named_args["k_units"] * UNIT
    return [c for c in configs if not c.kwargs["PAD"] or K % c.kwargs["BLOCK_K"] != 0]


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
    # the config's PAD, off where there are no padded copies (K whole steps: pruned unless forced)
    "PAD": lambda a: a["PAD"] and a["xp_desc"] is not None,
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
def _epilogue_store(acc, row0, rows, cols, b_ptr, y_ptr, M, N, n_out, stride_y, factor):
    """y[row0 + rows, cols] = bf16((acc + b) * factor), as acc * factor + b * factor (one FMA per
    element); rows are offsets from row0 inside the tile, cols absolute columns. The bias exists
    for the n_out real columns; y's rows are N >= n_out wide (a multiple of 8), so the store's
    mask is constant over every 8 columns and each store is 16 bytes."""
    bias = tl.load(b_ptr + cols, mask=cols < n_out, other=0.0).to(tl.float32) * factor
    y = (acc * factor + bias[None, :]).to(y_ptr.dtype.element_ty)
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


@triton.autotune(configs=_CONFIGS, key=["M", "n_units", "k_units", "sms"],
                 prune_configs_by={"early_config_prune": _prune})
@triton.heuristics(_HEURISTICS)
@triton.jit
def linear_scale_residual_kernel(
    x_desc, w_desc, xp_desc, wp_desc, x_ptr, w_ptr, b_ptr, y_ptr, ws_ptr,
    M, n_out, n_units, k_units, xm_units, wn_units, ym_units, factor, sms, full_tiles,
    UNIT: tl.constexpr, Y_UNIT: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    PER_SM: tl.constexpr, TMA: tl.constexpr, PAD: tl.constexpr, SPLIT: tl.constexpr, EVEN_K: tl.constexpr,
):
    """y = bf16((x @ W.T + b) * factor) for whole tiles; programs past full_tiles are pieces
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
        # TMA boxes: rows past M, columns past N and K steps past K arrive as zeros. PAD reads the
        # copies whose rows are whole K steps (every box row on a 128-byte line, zeros past K).
        if PAD:
            a_desc = xp_desc
            b_desc = wp_desc
        else:
            a_desc = x_desc
            b_desc = w_desc
        for k in range(k_lo, k_hi):
            a = a_desc.load([row0, k * BLOCK_K])
            b = b_desc.load([col0, k * BLOCK_K])
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
            # a piece of a split tile: park its fp32 partial for split_tile_scale_kernel
            local_m = tl.arange(0, BLOCK_M)
            local_n = tl.arange(0, BLOCK_N)
            tl.store(ws_ptr + (pid - full_tiles) * (BLOCK_M * BLOCK_N) + local_m[:, None] * BLOCK_N
                     + local_n[None, :], acc)
        else:
            _epilogue_store(acc, row0, rows_out, cols_out, b_ptr, y_ptr, M, N, n_out, stride_y, factor)
    else:
        _epilogue_store(acc, row0, rows_out, cols_out, b_ptr, y_ptr, M, N, n_out, stride_y, factor)


@triton.jit
def split_tile_scale_kernel(
    ws_ptr, b_ptr, y_ptr, M, n_out, n_units, ym_units, factor, full_tiles,
    Y_UNIT: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr,
    SPLIT: tl.constexpr, CHUNK: tl.constexpr,
):
    """The epilogue of the split tiles, CHUNK x CHUNK at a time: the tile's SPLIT fp32 pieces added
    in a fixed order (deterministic), then bias, the factor and the bf16 store."""
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
                    M, N, n_out, ym_units * Y_UNIT, factor)


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
def _pad_block(src_ptr, dst_ptr, row0, col0, R, k_units, src_units, dst_units,
               UNIT: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """dst[rows, cols] = src[rows, cols] for cols < K, zero for K <= cols < the padded width; strides
    and K in 16-byte units, so every load and store is 16 bytes with a mask constant over each."""
    K = k_units * UNIT
    stride = src_units * UNIT
    width = dst_units * UNIT
    rows = tl.arange(0, BLOCK_R)  # offsets from row0 (int64 block bases, int32 offsets inside)
    cols = col0 + tl.arange(0, BLOCK_C)
    in_rows = (row0 + rows < R)[:, None]
    value = tl.load(src_ptr + row0.to(tl.int64) * stride + rows[:, None] * stride + cols[None, :],
                    mask=in_rows & (cols < K)[None, :], other=0.0)
    tl.store(dst_ptr + row0.to(tl.int64) * width + rows[:, None] * width + cols[None, :], value,
             mask=in_rows & (cols < width)[None, :])


@triton.jit
def pad_k_kernel(x_ptr, w_ptr, xp_ptr, wp_ptr, M, N, k_units, x_units, w_units, padded_units,
                 UNIT: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """x and W into rows zero-padded to padded_units * UNIT columns, in one grid: the first
    cdiv(M, BLOCK_R) row blocks are x's, the rest W's."""
    x_blocks = tl.cdiv(M, BLOCK_R)
    rb = tl.program_id(0)
    col0 = tl.program_id(1) * BLOCK_C
    if rb < x_blocks:
        _pad_block(x_ptr, xp_ptr, rb * BLOCK_R, col0, M, k_units, x_units, padded_units, UNIT, BLOCK_R, BLOCK_C)
    else:
        _pad_block(w_ptr, wp_ptr, (rb - x_blocks) * BLOCK_R, col0, N, k_units, w_units, padded_units,
                   UNIT, BLOCK_R, BLOCK_C)


def _pad_k(x, w, xp, wp):
    """Launch pad_k_kernel: x (M x K) into xp (M x Kp), and W (N x K) into wp (N x Kp) unless wp is
    None (W's rows already Kp apart: no W row blocks in the grid); rows of x and W 16-byte aligned
    (see _aligned_rows), Kp a multiple of K_STEP."""
    M, K = x.shape
    N = w.shape[0]
    padded = xp.shape[1]
    w_blocks = 0 if wp is None else triton.cdiv(N, PAD_ROWS)
    grid = (triton.cdiv(M, PAD_ROWS) + w_blocks, triton.cdiv(padded, PAD_COLS))
    pad_k_kernel[grid](x, w, xp, xp if wp is None else wp, M, N, K // UNIT, x.stride(0) // UNIT,
                       w.stride(0) // UNIT, padded // UNIT, UNIT=UNIT, BLOCK_R=PAD_ROWS, BLOCK_C=PAD_COLS,
                       num_warps=4)


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
    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features, dtype=torch.bfloat16)
        self.scaling_factor = scaling_factor
        if in_features % K_STEP:
            # the same weight values, held with rows K_STEP-padded apart (a view of the first
            # in_features columns of a zeroed, wider buffer): every row of a TMA box of W starts on
            # a 128-byte line, with no copy per forward. load_state_dict copies into this layout.
            w = self.matmul.weight
            lined = torch.zeros((out_features, triton.cdiv(in_features, K_STEP) * K_STEP),
                                dtype=w.dtype, device=w.device)
            with torch.no_grad():
                lined[:, :in_features].copy_(w)
            self.matmul.weight = nn.Parameter(lined[:, :in_features], requires_grad=w.requires_grad)

    def forward(self, x):
        M = x.shape[0]
        w, b = self.matmul.weight, self.matmul.bias
        N = w.shape[0]
        x, w = _aligned_rows(x), _aligned_rows(w)
        K = x.shape[1]  # padded with zeros where needed, which add nothing to the product
        dev = x.device
        sms = _sm_count(dev)
        factor = self.scaling_factor + 1.0  # y * s + y, the clone being a detached copy of y
        # rows as wide as the next multiple of 8 (16-byte stores); the view returned leaves the
        # extra columns out
        n_padded = triton.cdiv(N, UNIT) * UNIT
        y = torch.empty((M, n_padded), device=dev, dtype=x.dtype)
        ws = torch.empty((_workspace_elements(M, n_padded, K, sms),), device=dev, dtype=torch.float32)
        # block shapes are set per config by _set_blocks
        x_desc = TensorDescriptor(x, [M, K], [x.stride(0), 1], [64, 64])
        w_desc = TensorDescriptor(w, [N, K], [w.stride(0), 1], [64, 64])
        if K % K_STEP:
            # rows padded to whole K steps for the PAD configs (their pre-hook fills them); W's only
            # where its rows are not already whole K steps apart (ModelNew's own weight is: the PAD
            # configs then read it in place, past K the descriptor's zero fill)
            k_padded = triton.cdiv(K, K_STEP) * K_STEP
            xp = torch.empty((M, k_padded), device=dev, dtype=x.dtype)
            xp_desc = TensorDescriptor(xp, [M, k_padded], [k_padded, 1], [64, 64])
            if w.stride(0) % K_STEP:
                wp = torch.empty((N, k_padded), device=dev, dtype=w.dtype)
                wp_desc = TensorDescriptor(wp, [N, k_padded], [k_padded, 1], [64, 64])
            else:
                wp_desc = TensorDescriptor(w, [N, K], [w.stride(0), 1], [64, 64])
        else:
            xp_desc = wp_desc = None  # no PAD config runs (pruned); None compiles to a constant
        linear_scale_residual_kernel[_grid(M, n_padded, K, sms)](
            x_desc, w_desc, xp_desc, wp_desc, x, w, b, y, ws, M, N, n_padded // UNIT, K // UNIT, x.stride(0) // UNIT,
            w.stride(0) // UNIT, y.stride(0) // UNIT, factor, sms, UNIT=UNIT, Y_UNIT=UNIT)
        # the tile the autotuner ran (set by every Autotuner.run; a capture that bypasses it gets the first)
        config = getattr(linear_scale_residual_kernel, "best_config", None) or linear_scale_residual_kernel.configs[0]
        bm, bn = config.kwargs["BLOCK_M"], config.kwargs["BLOCK_N"]
        tiles, full, split = _schedule(M, n_padded, K, bm, bn, config.kwargs["BLOCK_K"],
                                       _slots(sms, config.kwargs["PER_SM"]))
        if split > 1:
            split_tile_scale_kernel[(tiles - full, (bm // CHUNK) * (bn // CHUNK))](
                ws, b, y, M, N, n_padded // UNIT, y.stride(0) // UNIT, factor, full, Y_UNIT=UNIT,
                BLOCK_M=bm, BLOCK_N=bn, GROUP_M=config.kwargs["GROUP_M"], SPLIT=split, CHUNK=CHUNK, num_warps=4)
        return y if n_padded == N else y[:, :N]
