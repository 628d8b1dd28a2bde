"""Linear + sigmoid, then linear + logsumexp fused into the second GEMM's epilogue; round 3's
configs, plus stream-K persistent configs whose last tiles are dealt out along K over every SM, a
one-MUFU sigmoid, and 16-byte loads in the combine pass.

Round 3 (1.246x) leaves case 3 (3000 x 2048 -> 3000 -> 777) at 50.9% of the roofline and case 4
(8192 x 512 -> 8192 -> 256) at 57.1%. The brief's rung-2 split of case 3 puts 61% of the forward in
linear_sigmoid_kernel at 57% of its floor and 35% in linear_lse_partial_kernel at 38%, both
latency-bound with clean IR (TMA or 16-byte cp.async, wgmma, no spills): what is left is how the
tiles fall on 132 SMs. The second GEMM (3000 x 777, K = 3000, 47 K steps) has 96 tiles of 128x256
(0.73 of a wave: 36 SMs idle, and round 2's split leaves a tail over half a wave alone) or 168 of
128x128 (1.27 waves: 36 tail tiles in 3 pieces, 24 SMs idle, each piece a third of a tile); the
first (3000 x 3000) has 288 of 128x256 (2.18 waves; 24 tail tiles in 5 pieces, 12 SMs idle) or 576
of 128x128 (4.36 waves, 5 rounds on some SMs). The epilogue weighs too: the brief's case-4 finding
(round 3) left 17-28% of a program's time outside its 8-step K loop, and tl.sigmoid is an ex2 and a
divide (rcp): 2 MUFU ops per element, 2 x 32768 per 128x256 tile at 16 a clock per SM, 4096 clocks
beside a K = 512 main loop of about 8200 (half of it); 1/8 at case 3's K = 2048. What changed:
- stream-K configs (STREAM, 128x256 and 128x128, persistent, TMA): each of the SMs walks its
  share of all but the last tiles whole in round 3's flattened loop, then gets an equal share
  (to one K step) of the K steps of the rest, the last partial wave plus one whole wave before it
  (or every tile, for a grid under one wave), so that most streamed tiles are cut in two or three;
  a share holds at most two partial tiles, parked in workspace slots 2p and 2p + 1, and the last
  of a tile's programs to arrive adds their partials in program order (deterministic, as round
  2's split) and runs the tile's epilogue. Case 3's second GEMM at 128x256 becomes 34-35 K steps
  on each of the 132 SMs where round 3's 128x256 configs run one 47-step tile on 96 of them;
- the sigmoid is 0.5 + 0.5 tanh(v / 2) through tanh.approx.f32: one MUFU op per element (halving
  the epilogue's MUFU time), relative error 2^-11, under h's fp16 rounding (a systematic 2^-11
  error on every h moves case 3's y by 9e-6 in float64, against the 0.005 tolerance); the
  interpreter, which runs no PTX, keeps tl.sigmoid;
- the combine pass's loads (nv.scalar-access, best.py:358-359, 32-bit: masked by rows < M, and
  case 3's M = 3000 is not a multiple of 16) are masked by rows < ld, a multiple of 16, so they
  are 16 bytes; the second GEMM's partials now also fill rows M..ld (finite: the bias over zero
  rows) so that those loads read defined values.
The autotuner (key M, N, K) still times every config per GEMM and shape, so the cases round 3 wins
(0 and 2 at 91-94%) keep their configs where the streamed ones are not faster.

Kept from round 3: persistent walks flattened with their K loops, TMA operands, 128x128 two per SM.
From round 2: the split tail of the whole-tile configs (pieces parked in an L2-resident workspace,
added in a fixed order by the last arriver, SPLIT a constexpr), counters zeroed once per device and
reset by their last piece, 132 SMs assumed when compiling ahead of time and 4 under the interpreter.
From round 1: the logits never reach memory (per-64-column (max, sum of exp) partials, a small
combine pass); K extents and row strides in 8-element units; h rows padded to a multiple of 8
(zeros written by the first GEMM); x, W1, W2 copied to padded rows only where their rows are not
16-byte aligned (as TMA and 16-byte cp.async need); GROUP_M-grouped tile order.
"""
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

UNIT = 8  # fp16 elements per 16 bytes
SLOT = 64  # columns per logsumexp partial; also the width of a split tile's epilogue chunks
MIN_STEPS = 4  # fewest K steps a piece of a split tile gets
MAX_SPLIT = 8  # most pieces a tile is split into (the last piece reads them all back)
COUNTERS = 1024  # tile counters per kernel (a split or streamed tile's index among the tail tiles < slots)


def _set_blocks(nargs):
    """The descriptors' block shapes follow the config (TMA boxes of BLOCK_M x BLOCK_K, BLOCK_N x BLOCK_K)."""
    nargs["a_desc"].block_shape = [nargs["BLOCK_M"], nargs["BLOCK_K"]]
    nargs["w_desc"].block_shape = [nargs["BLOCK_N"], nargs["BLOCK_K"]]


def _configs():
    # (BLOCK_M, BLOCK_N, BLOCK_K, stages, warps, programs per SM on sm_90 from the IR's occupancy, TMA, PERSIST,
    # STREAM): round 2's cp.async tiles, the large ones again with TMA operands, round 3's persistent walks
    # (TMA), and persistent walks whose last tiles are streamed along K over every program
    shapes = [(128, 256, 64, 3, 8, 1, False, False, False), (256, 128, 64, 3, 8, 1, False, False, False),
              (128, 128, 64, 4, 8, 1, False, False, False), (128, 128, 64, 4, 4, 1, False, False, False),
              (64, 256, 64, 4, 8, 1, False, False, False), (64, 128, 64, 4, 4, 2, False, False, False),
              (128, 256, 64, 3, 8, 1, True, False, False), (256, 128, 64, 3, 8, 1, True, False, False),
              (128, 256, 64, 3, 8, 1, True, True, False), (128, 128, 64, 4, 8, 1, True, True, False),
              (128, 128, 64, 2, 8, 2, True, True, False),
              (128, 256, 64, 3, 8, 1, True, True, True), (128, 128, 64, 4, 8, 1, True, True, True)]
    return [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8, "PER_SM": p, "TMA": tma,
                           "PERSIST": persist, "STREAM": stream}, num_stages=s, num_warps=w, pre_hook=_set_blocks)
            for m, n, k, s, w, p, tma, persist, stream in shapes]


_CONFIGS = _configs()


def _schedule(M, N, K, block_m, block_n, block_k, slots, persist=False, stream=False):
    """(programs, whole tiles, pieces per split tile, partial tiles of workspace).

    Whole-tile grids: the tiles past the last whole wave of `slots` programs are split along K so
    that they fill the machine, when that gives each piece enough K steps. A persistent walk splits
    nothing. A streamed walk (stream-K) walks all but its last tiles whole, then deals the K steps
    of those (the last partial wave and one whole wave before it, or every tile of a grid under one
    wave) out evenly over its programs, each leaving at most two partial tiles: every SM gets the
    same work to within one K step, where a split tail leaves slots % tail SMs idle and a tail over
    half a wave is not split at all."""
    tiles = triton.cdiv(M, block_m) * triton.cdiv(N, block_n)
    steps = triton.cdiv(K, block_k)
    tail = tiles % slots
    if stream:
        if tiles <= slots:
            programs = min(slots, tiles * steps)  # at least one K step each
            return programs, 0, 1, 2 * programs
        if tail == 0:
            return slots, tiles, 1, 0
        return slots, tiles - tail - slots, 1, 2 * slots
    if persist:
        return min(tiles, slots), tiles, 1, 0
    if tail == 0:
        return tiles, tiles, 1, 0
    split = min(slots // tail, steps // MIN_STEPS, MAX_SPLIT)
    if split < 2:
        return tiles, tiles, 1, 0
    return tiles - tail + tail * split, tiles - tail, split, tail * split


def _slots(sms, per_sm):
    return max(1, min(sms * per_sm, COUNTERS))


def _args_schedule(a):
    return _schedule(a["M"], a["N"], a["k_units"] * a["UNIT"], a["BLOCK_M"], a["BLOCK_N"], a["BLOCK_K"],
                     _slots(a["sms"], a["PER_SM"]), a["PERSIST"], a["STREAM"])


_SPLIT_HEURISTICS = {"full_tiles": lambda a: _args_schedule(a)[1], "SPLIT": lambda a: _args_schedule(a)[2]}


def _grid(M, N, K, sms):
    def grid(meta):
        return (_schedule(M, N, K, meta["BLOCK_M"], meta["BLOCK_N"], meta["BLOCK_K"], _slots(sms, meta["PER_SM"]),
                          meta["PERSIST"], meta["STREAM"])[0],)
    return grid


def _workspace_elements(M, N, K, sms):
    """fp32 elements of partial tiles the largest schedule of any config needs for this shape."""
    most = 1
    for c in _CONFIGS:
        kw = c.kwargs
        parts = _schedule(M, N, K, kw["BLOCK_M"], kw["BLOCK_N"], kw["BLOCK_K"], _slots(sms, kw["PER_SM"]),
                          kw["PERSIST"], kw["STREAM"])[3]
        most = max(most, parts * kw["BLOCK_M"] * kw["BLOCK_N"])
    return most


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
def _tma_acc(a_desc, w_desc, pid_m, pid_n, k_lo, k_hi,
             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """K steps [k_lo, k_hi) of tile (pid_m, pid_n) of a @ w.T in fp32, operands through the
    descriptors: rows past M, columns past N and K steps past K arrive as zeros."""
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(k_lo, k_hi):
        a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])
        w = w_desc.load([pid_n * BLOCK_N, k * BLOCK_K])
        acc = tl.dot(a, w.T, acc)
    return acc


@triton.jit
def _gemm_tile(a_desc, w_desc, a_ptr, w_ptr, M, N, k_units, am_units, wn_units, full_tiles,
               UNIT: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
               GROUP_M: tl.constexpr, TMA: tl.constexpr, SPLIT: tl.constexpr):
    """fp32 tile (or, for a piece of a split tile, its K range's share) of a @ w.T for this program,
    in grouped tile order; its row and column offsets and pid_n. TMA: operands through the
    descriptors, else masked 16-byte cp.async."""
    K = k_units * UNIT
    stride_am = am_units * UNIT
    stride_wn = wn_units * UNIT
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
    if TMA:
        acc = _tma_acc(a_desc, w_desc, pid_m, pid_n, k_lo, k_hi, BLOCK_M, BLOCK_N, BLOCK_K)
    else:
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        offs_k = tl.arange(0, BLOCK_K)
        a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] + k_lo * BLOCK_K
        w_ptrs = w_ptr + offs_k[:, None] + offs_n[None, :] * stride_wn + k_lo * BLOCK_K
        for k in range(k_lo, k_hi):
            left = K - k * BLOCK_K
            a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < left), other=0.0)
            w = tl.load(w_ptrs, mask=(offs_k[:, None] < left) & (offs_n[None, :] < N), other=0.0)
            acc = tl.dot(a, w, acc)
            a_ptrs += BLOCK_K
            w_ptrs += BLOCK_K
    return acc, offs_m, offs_n, pid_n


@triton.jit
def _arrive(acc, ws_ptr, cnt_ptr, piece, counter, count, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """A piece of a tile cut along K: park its partial at workspace slot `piece` and count it in at
    `counter`; True for the piece that arrives last of `count` (it resets the counter), which then
    runs the tile's epilogue."""
    rows = tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    tl.store(ws_ptr + piece * (BLOCK_M * BLOCK_N) + rows[:, None] * BLOCK_N + cols[None, :], acc)
    tl.debug_barrier()  # every thread's partial is written before the release below
    arrived = tl.atomic_add(cnt_ptr + counter, 1, sem="acq_rel", scope="gpu")
    last = arrived == count - 1
    if last:
        tl.store(cnt_ptr + counter, 0)
    return last


@triton.jit
def _arrive_split(acc, ws_ptr, cnt_ptr, full_tiles, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  SPLIT: tl.constexpr):
    """A piece of a split tail tile: its slot is its index among the tail programs."""
    piece = tl.program_id(0) - full_tiles
    return _arrive(acc, ws_ptr, cnt_ptr, piece, piece // SPLIT, SPLIT, BLOCK_M, BLOCK_N)


@triton.jit
def _gather(ws_ptr, full_tiles, chunk, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, WIDTH: tl.constexpr,
            SPLIT: tl.constexpr):
    """Columns [chunk * WIDTH, (chunk + 1) * WIDTH) of this split tile: its pieces added in order."""
    first = (tl.program_id(0) - full_tiles) // SPLIT * SPLIT
    rows = tl.arange(0, BLOCK_M)
    cols = chunk * WIDTH + tl.arange(0, WIDTH)
    at = ws_ptr + first * (BLOCK_M * BLOCK_N) + rows[:, None] * BLOCK_N + cols[None, :]
    total = tl.load(at, cache_modifier=".cg")
    for s in tl.static_range(1, SPLIT):
        total += tl.load(at + s * (BLOCK_M * BLOCK_N), cache_modifier=".cg")
    return total


@triton.jit
def _stream_start(p, iters, programs):
    """First K step (counted over the streamed tiles) of program p's share: p * iters / programs."""
    return (p * iters) // programs


@triton.jit
def _stream_owner(i, iters, programs):
    """The program whose share holds streamed K step i: the last p with p * iters // programs <= i."""
    return tl.cdiv((i + 1) * programs, iters) - 1


@triton.jit
def _stream_slot(p, t, iters, programs, steps):
    """Workspace slot of program p's partial of streamed tile t: 2p for the tile its share starts
    in, 2p + 1 for the one it ends in (a share holds at most those two partial tiles)."""
    return 2 * p + (t != _stream_start(p, iters, programs) // steps).to(tl.int32)


@triton.jit
def _stream_gather(ws_ptr, t, first, last, iters, programs, steps, chunk,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, WIDTH: tl.constexpr):
    """Columns [chunk * WIDTH, (chunk + 1) * WIDTH) of streamed tile t: the partials of programs
    first..last added in program order, whichever arrived last (deterministic)."""
    rows = tl.arange(0, BLOCK_M)
    cols = chunk * WIDTH + tl.arange(0, WIDTH)
    at = ws_ptr + rows[:, None] * BLOCK_N + cols[None, :]
    total = tl.zeros((BLOCK_M, WIDTH), dtype=tl.float32)
    for p in range(first, last + 1):
        slot = _stream_slot(p, t, iters, programs, steps)
        total += tl.load(at + slot * (BLOCK_M * BLOCK_N), cache_modifier=".cg")
    return total


@triton.jit
def _sigmoid(v, FAST: tl.constexpr):
    """sigmoid(v) = 0.5 + 0.5 tanh(v / 2). FAST: tanh.approx.f32, one MUFU op per element where
    tl.sigmoid's exp and divide take two (ex2, rcp), relative error 2^-11, under the fp16 rounding
    of h; else tl.sigmoid (the interpreter runs no PTX)."""
    if FAST:
        t = tl.inline_asm_elementwise("tanh.approx.f32 $0, $1;", "=f,f", [v * 0.5], dtype=tl.float32,
                                      is_pure=True, pack=1)
        return 0.5 + 0.5 * t
    return tl.sigmoid(v)


@triton.jit
def _sigmoid_store(acc, offs_m, offs_n, b_ptr, h_ptr, M, N, stride_hm, FAST: tl.constexpr):
    n_mask = offs_n < N
    h = _sigmoid(acc + tl.load(b_ptr + offs_n, mask=n_mask, other=0.0).to(tl.float32)[None, :], FAST)
    h = tl.where(n_mask[None, :], h, 0.0)
    tl.store(h_ptr + offs_m[:, None] * stride_hm + offs_n[None, :], h.to(h_ptr.dtype.element_ty),
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < stride_hm))


@triton.autotune(configs=_CONFIGS, key=["M", "N", "k_units"])
@triton.heuristics(_SPLIT_HEURISTICS)
@triton.jit
def linear_sigmoid_kernel(
    a_desc, w_desc, x_ptr, w_ptr, b_ptr, h_ptr, ws_ptr, cnt_ptr,
    M, N, k_units, xm_units, wn_units, hm_units, sms, full_tiles,
    UNIT: tl.constexpr, SLOT: tl.constexpr, FAST: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    PER_SM: tl.constexpr, TMA: tl.constexpr, PERSIST: tl.constexpr, STREAM: tl.constexpr, SPLIT: tl.constexpr,
):
    """h = sigmoid(x @ W.T + b) in fp16; the columns from N up to the padded row width are zeros.
    PERSIST: each program walks the first full_tiles tiles (TMA operands, no split) in one loop
    fused with the K loop; STREAM: then its share of the K steps of the rest."""
    stride_hm = hm_units * UNIT
    if PERSIST:
        steps = tl.cdiv(k_units * UNIT, BLOCK_K)
        for tile in tl.range(tl.program_id(0), full_tiles, tl.num_programs(0), flatten=True):
            pid_m, pid_n = _tile_coords(tile, M, N, BLOCK_M, BLOCK_N, GROUP_M)
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            # TMA boxes: rows past M, columns past N and K steps past K arrive as zeros
            for k in range(steps):
                a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])
                w = w_desc.load([pid_n * BLOCK_N, k * BLOCK_K])
                acc = tl.dot(a, w.T, acc)
            _sigmoid_store(acc, pid_m * BLOCK_M + tl.arange(0, BLOCK_M), pid_n * BLOCK_N + tl.arange(0, BLOCK_N),
                           b_ptr, h_ptr, M, N, stride_hm, FAST)
        if STREAM:
            p = tl.program_id(0)
            programs = tl.num_programs(0)
            iters = (tl.cdiv(M, BLOCK_M) * tl.cdiv(N, BLOCK_N) - full_tiles) * steps
            begin = _stream_start(p, iters, programs)
            end = _stream_start(p + 1, iters, programs)
            for t in range(begin // steps, tl.cdiv(end, steps)):
                k_lo = tl.maximum(begin - t * steps, 0)
                k_hi = tl.minimum(end - t * steps, steps)
                pid_m, pid_n = _tile_coords(full_tiles + t, M, N, BLOCK_M, BLOCK_N, GROUP_M)
                acc = _tma_acc(a_desc, w_desc, pid_m, pid_n, k_lo, k_hi, BLOCK_M, BLOCK_N, BLOCK_K)
                offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
                if (k_lo == 0) & (k_hi == steps):
                    _sigmoid_store(acc, offs_m, pid_n * BLOCK_N + tl.arange(0, BLOCK_N), b_ptr, h_ptr, M, N,
                                   stride_hm, FAST)
                else:
                    first = _stream_owner(t * steps, iters, programs)
                    last = _stream_owner((t + 1) * steps - 1, iters, programs)
                    if _arrive(acc, ws_ptr, cnt_ptr, _stream_slot(p, t, iters, programs, steps), t,
                               last - first + 1, BLOCK_M, BLOCK_N):
                        # chunks wholly past the padded row width store nothing: skip them
                        chunks = tl.minimum(tl.cdiv(stride_hm - pid_n * BLOCK_N, SLOT), BLOCK_N // SLOT)
                        for c in range(chunks):
                            part = _stream_gather(ws_ptr, t, first, last, iters, programs, steps, c,
                                                  BLOCK_M, BLOCK_N, SLOT)
                            cols = pid_n * BLOCK_N + c * SLOT + tl.arange(0, SLOT)
                            _sigmoid_store(part, offs_m, cols, b_ptr, h_ptr, M, N, stride_hm, FAST)
        return
    acc, offs_m, offs_n, pid_n = _gemm_tile(a_desc, w_desc, x_ptr, w_ptr, M, N, k_units, xm_units, wn_units,
                                            full_tiles, UNIT, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, TMA, SPLIT)
    if SPLIT > 1:
        if tl.program_id(0) >= full_tiles:
            if _arrive_split(acc, ws_ptr, cnt_ptr, full_tiles, BLOCK_M, BLOCK_N, SPLIT):
                # chunks wholly past the padded row width store nothing: skip them
                chunks = tl.minimum(tl.cdiv(stride_hm - pid_n * BLOCK_N, SLOT), BLOCK_N // SLOT)
                for c in range(chunks):
                    part = _gather(ws_ptr, full_tiles, c, BLOCK_M, BLOCK_N, SLOT, SPLIT)
                    cols = pid_n * BLOCK_N + c * SLOT + tl.arange(0, SLOT)
                    _sigmoid_store(part, offs_m, cols, b_ptr, h_ptr, M, N, stride_hm, FAST)
        else:
            _sigmoid_store(acc, offs_m, offs_n, b_ptr, h_ptr, M, N, stride_hm, FAST)
    else:
        _sigmoid_store(acc, offs_m, offs_n, b_ptr, h_ptr, M, N, stride_hm, FAST)


@triton.jit
def _lse_store(acc, offs_m, offs_n, b_ptr, max_ptr, sum_ptr, N, slots, ld, first_slot,
               WIDTH: tl.constexpr, SLOT: tl.constexpr):
    """Per row, the max and the sum of exp(v - max) of v = acc + b over these WIDTH columns, stored at
    slot first_slot of (slots, ld) arrays (ld >= M, a multiple of 16); the other WIDTH / SLOT - 1
    slots they cover get (-inf, 0). Rows M..ld are stored too (the bias alone, from the zero rows
    the loads fill in), so that lse_combine_kernel may read whole 16-row groups."""
    LOG2E: tl.constexpr = 1.4426950408889634
    n_mask = offs_n < N
    v = acc + tl.load(b_ptr + offs_n, mask=n_mask, other=0.0).to(tl.float32)[None, :]
    v = tl.where(n_mask[None, :], v, float("-inf"))
    row_max = tl.max(v, axis=1)
    row_sum = tl.sum(tl.exp2((v - row_max[:, None]) * LOG2E), axis=1)

    PER_TILE: tl.constexpr = WIDTH // SLOT
    local = tl.arange(0, PER_TILE)
    slot = first_slot + local
    first = (local == 0)[None, :]
    at = slot[None, :] * ld + offs_m[:, None]
    mask = (offs_m[:, None] < ld) & (slot[None, :] < slots)
    tl.store(max_ptr + at, tl.where(first, row_max[:, None], float("-inf")), mask=mask)
    tl.store(sum_ptr + at, tl.where(first, row_sum[:, None], 0.0), mask=mask)


@triton.autotune(configs=_CONFIGS, key=["M", "N", "k_units"])
@triton.heuristics(_SPLIT_HEURISTICS)
@triton.jit
def linear_lse_partial_kernel(
    a_desc, w_desc, h_ptr, w_ptr, b_ptr, max_ptr, sum_ptr, ws_ptr, cnt_ptr,
    M, N, k_units, hm_units, wn_units, slots, ld, sms, full_tiles,
    UNIT: tl.constexpr, SLOT: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    PER_SM: tl.constexpr, TMA: tl.constexpr, PERSIST: tl.constexpr, STREAM: tl.constexpr, SPLIT: tl.constexpr,
):
    """Logsumexp partials of v = h @ W.T + b: a whole tile writes its row partial at slot
    pid_n * BLOCK_N / SLOT and (-inf, 0) in the tile's other slots; a split or streamed tile's last
    piece writes one partial per SLOT columns. PERSIST: each program walks the first full_tiles
    tiles (TMA operands) in one loop fused with the K loop; STREAM: then its share of the K steps of
    the rest."""
    PER_TILE: tl.constexpr = BLOCK_N // SLOT
    if PERSIST:
        steps = tl.cdiv(k_units * UNIT, BLOCK_K)
        for tile in tl.range(tl.program_id(0), full_tiles, tl.num_programs(0), flatten=True):
            pid_m, pid_n = _tile_coords(tile, M, N, BLOCK_M, BLOCK_N, GROUP_M)
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for k in range(steps):
                a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])
                w = w_desc.load([pid_n * BLOCK_N, k * BLOCK_K])
                acc = tl.dot(a, w.T, acc)
            _lse_store(acc, pid_m * BLOCK_M + tl.arange(0, BLOCK_M), pid_n * BLOCK_N + tl.arange(0, BLOCK_N),
                       b_ptr, max_ptr, sum_ptr, N, slots, ld, pid_n * PER_TILE, BLOCK_N, SLOT)
        if STREAM:
            p = tl.program_id(0)
            programs = tl.num_programs(0)
            iters = (tl.cdiv(M, BLOCK_M) * tl.cdiv(N, BLOCK_N) - full_tiles) * steps
            begin = _stream_start(p, iters, programs)
            end = _stream_start(p + 1, iters, programs)
            for t in range(begin // steps, tl.cdiv(end, steps)):
                k_lo = tl.maximum(begin - t * steps, 0)
                k_hi = tl.minimum(end - t * steps, steps)
                pid_m, pid_n = _tile_coords(full_tiles + t, M, N, BLOCK_M, BLOCK_N, GROUP_M)
                acc = _tma_acc(a_desc, w_desc, pid_m, pid_n, k_lo, k_hi, BLOCK_M, BLOCK_N, BLOCK_K)
                offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
                if (k_lo == 0) & (k_hi == steps):
                    _lse_store(acc, offs_m, pid_n * BLOCK_N + tl.arange(0, BLOCK_N), b_ptr, max_ptr, sum_ptr,
                               N, slots, ld, pid_n * PER_TILE, BLOCK_N, SLOT)
                else:
                    first = _stream_owner(t * steps, iters, programs)
                    last = _stream_owner((t + 1) * steps - 1, iters, programs)
                    if _arrive(acc, ws_ptr, cnt_ptr, _stream_slot(p, t, iters, programs, steps), t,
                               last - first + 1, BLOCK_M, BLOCK_N):
                        # chunks wholly past N map to slots past the last: skip them
                        chunks = tl.minimum(tl.cdiv(N - pid_n * BLOCK_N, SLOT), PER_TILE)
                        for c in range(chunks):
                            part = _stream_gather(ws_ptr, t, first, last, iters, programs, steps, c,
                                                  BLOCK_M, BLOCK_N, SLOT)
                            cols = pid_n * BLOCK_N + c * SLOT + tl.arange(0, SLOT)
                            _lse_store(part, offs_m, cols, b_ptr, max_ptr, sum_ptr, N, slots, ld,
                                       pid_n * PER_TILE + c, SLOT, SLOT)
        return
    acc, offs_m, offs_n, pid_n = _gemm_tile(a_desc, w_desc, h_ptr, w_ptr, M, N, k_units, hm_units, wn_units,
                                            full_tiles, UNIT, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, TMA, SPLIT)
    if SPLIT > 1:
        if tl.program_id(0) >= full_tiles:
            if _arrive_split(acc, ws_ptr, cnt_ptr, full_tiles, BLOCK_M, BLOCK_N, SPLIT):
                # chunks wholly past N map to slots past the last: skip them
                chunks = tl.minimum(tl.cdiv(N - pid_n * BLOCK_N, SLOT), PER_TILE)
                for c in range(chunks):
                    part = _gather(ws_ptr, full_tiles, c, BLOCK_M, BLOCK_N, SLOT, SPLIT)
                    cols = pid_n * BLOCK_N + c * SLOT + tl.arange(0, SLOT)
                    _lse_store(part, offs_m, cols, b_ptr, max_ptr, sum_ptr, N, slots, ld,
                               pid_n * PER_TILE + c, SLOT, SLOT)
        else:
            _lse_store(acc, offs_m, offs_n, b_ptr, max_ptr, sum_ptr, N, slots, ld, pid_n * PER_TILE,
                       BLOCK_N, SLOT)
    else:
        _lse_store(acc, offs_m, offs_n, b_ptr, max_ptr, sum_ptr, N, slots, ld, pid_n * PER_TILE, BLOCK_N,
                   SLOT)


@triton.jit
def lse_combine_kernel(max_ptr, sum_ptr, y_ptr, M, slots, ld,
                       BLOCK_R: tl.constexpr, BLOCK_S: tl.constexpr):
    """y[row] = max + log(sum) over the row's partials in all slots: running (max, sum) tiles merged
    element-wise per step, reduced across slots once after the loop. Slots lie ld apart, a multiple
    of 16 (Triton specializes on that), and rows up to ld hold finite partials, so the loads are
    masked in 16-row groups (rows < ld, not rows < M: M = 3000 is not a multiple of 16, which left
    the mask, and so the loads, 32 bits wide) and are 16 bytes."""
    LOG2E: tl.constexpr = 1.4426950408889634
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    row_mask = rows < M
    load_rows = rows < ld
    best = tl.full((BLOCK_S, BLOCK_R), float("-inf"), tl.float32)
    total = tl.zeros((BLOCK_S, BLOCK_R), dtype=tl.float32)
    for start in range(0, slots, BLOCK_S):
        s = start + tl.arange(0, BLOCK_S)
        mask = (s[:, None] < slots) & load_rows[None, :]
        at = s[:, None] * ld + rows[None, :]
        m = tl.load(max_ptr + at, mask=mask, other=float("-inf"))
        e = tl.load(sum_ptr + at, mask=mask, other=0.0)
        new_best = tl.maximum(best, m)
        safe = tl.where(new_best == float("-inf"), 0.0, new_best)
        total = total * tl.exp2((best - safe) * LOG2E) + e * tl.exp2((m - safe) * LOG2E)
        best = new_best
    row_best = tl.max(best, axis=0)
    safe = tl.where(row_best == float("-inf"), 0.0, row_best)
    row_total = tl.sum(total * tl.exp2((best - safe[None, :]) * LOG2E), axis=0)
    row_total = tl.where(row_mask, row_total, 1.0)  # rows past M (past ld: no partials): keep log from zero
    tl.store(y_ptr + rows, (row_best + tl.log(row_total)).to(y_ptr.dtype.element_ty), mask=row_mask)


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


@triton.jit
def zero_kernel(ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(ptr + offs, tl.zeros((BLOCK,), dtype=tl.int32), mask=offs < n)


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


def _interpreting():
    return os.environ.get("TRITON_INTERPRET") == "1"


def _sm_count(device):
    """SMs of the device; with no device, 132 (H100/H200) when compiling ahead of time, so the
    schedule is the one the GPU runs, and 4 under the interpreter, so small shapes reach the split
    tiles."""
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).multi_processor_count
    return 4 if _interpreting() else 132


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.linear1 = nn.Linear(input_size, hidden_size, dtype=torch.float16)
        self.linear2 = nn.Linear(hidden_size, output_size, dtype=torch.float16)
        self._counters = {}  # per device: split-tile counters, zero between launches

    def _counts(self, device):
        key = str(device)
        if key not in self._counters:
            counts = torch.empty((2 * COUNTERS,), device=device, dtype=torch.int32)
            zero_kernel[(triton.cdiv(2 * COUNTERS, 1024),)](counts, 2 * COUNTERS, BLOCK=1024)
            self._counters[key] = counts
        return self._counters[key]

    def forward(self, x):
        M = x.shape[0]
        w1, b1 = self.linear1.weight, self.linear1.bias
        w2, b2 = self.linear2.weight, self.linear2.bias
        H, N = w1.shape[0], w2.shape[0]
        x, w1, w2 = _aligned_rows(x), _aligned_rows(w1), _aligned_rows(w2)
        K = x.shape[1]  # padded with zeros where needed, which add nothing to the product
        Hp = w2.shape[1]  # the hidden size rounded up to a multiple of UNIT
        sms = _sm_count(x.device)
        counts = self._counts(x.device)
        ws = torch.empty((max(_workspace_elements(M, H, K, sms), _workspace_elements(M, N, Hp, sms)),),
                         device=x.device, dtype=torch.float32)

        h = torch.empty((M, Hp), device=x.device, dtype=x.dtype)
        # block shapes are set per config by _set_blocks
        x_desc = TensorDescriptor(x, [M, K], [x.stride(0), 1], [64, 64])
        w1_desc = TensorDescriptor(w1, [H, K], [w1.stride(0), 1], [64, 64])
        linear_sigmoid_kernel[_grid(M, H, K, sms)](
            x_desc, w1_desc, x, w1, b1, h, ws, counts, M, H, K // UNIT, x.stride(0) // UNIT, w1.stride(0) // UNIT,
            Hp // UNIT, sms, UNIT=UNIT, SLOT=SLOT, FAST=not _interpreting())

        slots = triton.cdiv(N, SLOT)
        ld = triton.cdiv(M, 16) * 16  # slot rows 64-byte aligned: 16-byte loads in lse_combine_kernel
        part_max = torch.empty((slots, ld), device=x.device, dtype=torch.float32)
        part_sum = torch.empty((slots, ld), device=x.device, dtype=torch.float32)
        h_desc = TensorDescriptor(h, [M, Hp], [Hp, 1], [64, 64])
        w2_desc = TensorDescriptor(w2, [N, Hp], [w2.stride(0), 1], [64, 64])
        linear_lse_partial_kernel[_grid(M, N, Hp, sms)](
            h_desc, w2_desc, h, w2, b2, part_max, part_sum, ws, counts[COUNTERS:], M, N, Hp // UNIT, Hp // UNIT,
            w2.stride(0) // UNIT, slots, ld, sms, UNIT=UNIT, SLOT=SLOT)

        y = torch.empty((M,), device=x.device, dtype=x.dtype)
        lse_combine_kernel[(triton.cdiv(M, 128),)](part_max, part_sum, y, M, slots, ld,
                                                   BLOCK_R=128, BLOCK_S=16, num_warps=4)
        return y
