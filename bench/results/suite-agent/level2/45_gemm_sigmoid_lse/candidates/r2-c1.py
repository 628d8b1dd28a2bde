"""Linear + sigmoid, then linear + logsumexp fused into the second GEMM's epilogue, with the tiles
that would run alone in a last, mostly idle wave split along K over the idle SMs.

Round 1 (1.873x) runs cases 0 and 2 at 69-76% of the roofline and case 3 (M=3000, K=2048,
H=3000, N=777) at 41%. The brief's split puts 67% of case 3's forward in linear_sigmoid_kernel
(launched at line 190) and 30% in linear_lse_partial_kernel (line 200). Its "9% of its floor" is a
bytes-only floor (the split records no flops for it); against the GEMM's 36.9 GFLOP (49 us at the
measured 754 TFLOPS) the kernel's 112 us is 44%. Its IR (`ladder ir --case 3` on the best) is
clean: 128-bit masked cp.async for both operands (best.py:65-66), wgmma [16, 256, 16], a pipelined
loop (line 63), no spills, 128-bit h stores (line 88). What the IR facts do show is the launch:
linear_sigmoid_kernel's grid is 288 programs of 128x256 = 2.18 waves on 132 SMs (one program per
SM, limited by registers and shared memory), so the third wave runs 24 programs for as long as a full
one while 108 SMs idle: 3 waves of time for 2.18 of work. linear_lse_partial_kernel's grid is 96
programs = 0.73 waves (36 SMs idle throughout); its smaller tiles give 168-329 programs, 1.25-1.4
waves. Case 4's second GEMM (N=256, K=8192) is the same: 64 programs of 128x256.

Here both GEMMs take their tiles in two parts:
- the first floor(tiles / slots) * slots tiles (slots = SMs x programs per SM for the config) run
  whole, as before, with the same epilogue;
- each of the remaining tiles (the last, partial wave, or all of them when there are fewer tiles than
  slots) is split along K into S pieces, S = min(slots // tail, K steps // 4, 8), so the tail fills
  the machine: case 3's first GEMM runs 264 whole tiles and 24 x 5 pieces of 6-7 K steps (about
  2.2 waves of time instead of 3), its second GEMM at 128x128 132 whole tiles and 36 x 3 pieces,
  case 4's second GEMM at 128x256 64 x 2 pieces of 64 K steps;
- a piece writes its fp32 partial tile to a workspace (at most one partial per slot, 17 MB, in L2),
  then increments its tile's counter (bar.sync, then an acq_rel atomic: the arrive of a split-K
  semaphore); the piece that arrives last resets the counter and runs the epilogue from the
  workspace, adding the pieces in a fixed order (deterministic), 64 columns at a time (the bias and
  sigmoid into h, or the bias and one (max, sum of exp) logsumexp partial per 64-column slot), so no
  second full tile is held in registers;
- which tiles split is a heuristic of the config (SPLIT is a constexpr: where nothing splits, on
  cases 0-2 with the large tiles, the kernel is the round-1 kernel), the grid computed from the same
  schedule; the counters are zeroed once per device by a Triton kernel and reset by their last piece;
  with no device the schedule assumes 132 SMs when compiling ahead of time (the H100/H200 schedule)
  and 4 under the interpreter, so that small shapes reach the split tiles.
Also: lse_combine_kernel (nv.loop-carried-reduction, lines 136 and 138: a cross-warp max and sum
every slot step) keeps running (max, sum of exp) tiles element-wise and reduces across slots once.

Kept from round 1: the logits never reach memory (per-64-column partials, a small combine pass); K
extents and row strides in 8-element units so every operand load is a 128-bit cp.async; h rows padded
to a multiple of 8 (zeros written by the first GEMM); x, W1, W2 copied to padded rows only where
their rows are not 16-byte aligned; autotuned Hopper tiles in GROUP_M-grouped order.
"""
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl

UNIT = 8  # fp16 elements per 16 bytes
SLOT = 64  # columns per logsumexp partial; also the width of a split tile's epilogue chunks
MIN_STEPS = 4  # fewest K steps a piece of a split tile gets
MAX_SPLIT = 8  # most pieces a tile is split into (the last piece reads them all back)
COUNTERS = 1024  # tile counters per kernel (a split tile's index among the tail tiles < slots)


def _configs():
    # (BLOCK_M, BLOCK_N, BLOCK_K, stages, warps, programs per SM on sm_90 from the IR's occupancy)
    shapes = [(128, 256, 64, 3, 8, 1), (256, 128, 64, 3, 8, 1), (128, 128, 64, 4, 8, 1), (128, 128, 64, 4, 4, 1),
              (64, 256, 64, 4, 8, 1), (64, 128, 64, 4, 4, 2)]
    return [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8, "PER_SM": p},
                          num_stages=s, num_warps=w)
            for m, n, k, s, w, p in shapes]


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
    return max(1, min(sms * per_sm, COUNTERS))


def _args_schedule(a):
    return _schedule(a["M"], a["N"], a["k_units"] * a["UNIT"], a["BLOCK_M"], a["BLOCK_N"], a["BLOCK_K"],
                     _slots(a["sms"], a["PER_SM"]))


_SPLIT_HEURISTICS = {"full_tiles": lambda a: _args_schedule(a)[1], "SPLIT": lambda a: _args_schedule(a)[2]}


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
def _gemm_tile(a_ptr, w_ptr, M, N, k_units, am_units, wn_units, full_tiles,
               UNIT: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
               GROUP_M: tl.constexpr, SPLIT: tl.constexpr):
    """fp32 tile (or, for a piece of a split tile, its K range's share) of a @ w.T for this program,
    in grouped tile order; its row and column offsets and pid_n."""
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
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * tiles_n
    first_m = (tile // group) * GROUP_M
    rows_in_group = min(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (tile % group) % rows_in_group
    pid_n = (tile % group) // rows_in_group

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] + k_lo * BLOCK_K
    w_ptrs = w_ptr + offs_k[:, None] + offs_n[None, :] * stride_wn + k_lo * BLOCK_K
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(k_lo, k_hi):
        left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < left), other=0.0)
        w = tl.load(w_ptrs, mask=(offs_k[:, None] < left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, w, acc)
        a_ptrs += BLOCK_K
        w_ptrs += BLOCK_K
    return acc, offs_m, offs_n, pid_n


@triton.jit
def _arrive(acc, ws_ptr, cnt_ptr, full_tiles, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, SPLIT: tl.constexpr):
    """A piece of a split tile: park its partial in the workspace and count it in; True for the
    piece that arrives last (it resets the counter), which then runs the tile's epilogue."""
    piece = tl.program_id(0) - full_tiles
    rows = tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    tl.store(ws_ptr + piece * (BLOCK_M * BLOCK_N) + rows[:, None] * BLOCK_N + cols[None, :], acc)
    tl.debug_barrier()  # every thread's partial is written before the release below
    arrived = tl.atomic_add(cnt_ptr + piece // SPLIT, 1, sem="acq_rel", scope="gpu")
    last = arrived == SPLIT - 1
    if last:
        tl.store(cnt_ptr + piece // SPLIT, 0)
    return last


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
def _sigmoid_store(acc, offs_m, offs_n, b_ptr, h_ptr, M, N, stride_hm):
    n_mask = offs_n < N
    h = tl.sigmoid(acc + tl.load(b_ptr + offs_n, mask=n_mask, other=0.0).to(tl.float32)[None, :])
    h = tl.where(n_mask[None, :], h, 0.0)
    tl.store(h_ptr + offs_m[:, None] * stride_hm + offs_n[None, :], h.to(h_ptr.dtype.element_ty),
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < stride_hm))


@triton.autotune(configs=_CONFIGS, key=["M", "N", "k_units"])
@triton.heuristics(_SPLIT_HEURISTICS)
@triton.jit
def linear_sigmoid_kernel(
    x_ptr, w_ptr, b_ptr, h_ptr, ws_ptr, cnt_ptr,
    M, N, k_units, xm_units, wn_units, hm_units, sms, full_tiles,
    UNIT: tl.constexpr, SLOT: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    PER_SM: tl.constexpr, SPLIT: tl.constexpr,
):
    """h = sigmoid(x @ W.T + b) in fp16; the columns from N up to the padded row width are zeros."""
    acc, offs_m, offs_n, pid_n = _gemm_tile(x_ptr, w_ptr, M, N, k_units, xm_units, wn_units, full_tiles,
                                            UNIT, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, SPLIT)
    stride_hm = hm_units * UNIT
    if SPLIT > 1:
        if tl.program_id(0) >= full_tiles:
            if _arrive(acc, ws_ptr, cnt_ptr, full_tiles, BLOCK_M, BLOCK_N, SPLIT):
                # chunks wholly past the padded row width store nothing: skip them
                chunks = tl.minimum(tl.cdiv(stride_hm - pid_n * BLOCK_N, SLOT), BLOCK_N // SLOT)
                for c in range(chunks):
                    part = _gather(ws_ptr, full_tiles, c, BLOCK_M, BLOCK_N, SLOT, SPLIT)
                    cols = pid_n * BLOCK_N + c * SLOT + tl.arange(0, SLOT)
                    _sigmoid_store(part, offs_m, cols, b_ptr, h_ptr, M, N, stride_hm)
        else:
            _sigmoid_store(acc, offs_m, offs_n, b_ptr, h_ptr, M, N, stride_hm)
    else:
        _sigmoid_store(acc, offs_m, offs_n, b_ptr, h_ptr, M, N, stride_hm)


@triton.jit
def _lse_store(acc, offs_m, offs_n, b_ptr, max_ptr, sum_ptr, M, N, slots, first_slot,
               WIDTH: tl.constexpr, SLOT: tl.constexpr):
    """Per row, the max and the sum of exp(v - max) of v = acc + b over these WIDTH columns, stored at
    slot first_slot of (slots, M) arrays; the other WIDTH / SLOT - 1 slots they cover get (-inf, 0)."""
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
    at = slot[None, :] * M + offs_m[:, None]
    mask = (offs_m[:, None] < M) & (slot[None, :] < slots)
    tl.store(max_ptr + at, tl.where(first, row_max[:, None], float("-inf")), mask=mask)
    tl.store(sum_ptr + at, tl.where(first, row_sum[:, None], 0.0), mask=mask)


@triton.autotune(configs=_CONFIGS, key=["M", "N", "k_units"])
@triton.heuristics(_SPLIT_HEURISTICS)
@triton.jit
def linear_lse_partial_kernel(
    h_ptr, w_ptr, b_ptr, max_ptr, sum_ptr, ws_ptr, cnt_ptr,
    M, N, k_units, hm_units, wn_units, slots, sms, full_tiles,
    UNIT: tl.constexpr, SLOT: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    PER_SM: tl.constexpr, SPLIT: tl.constexpr,
):
    """Logsumexp partials of v = h @ W.T + b: a whole tile writes its row partial at slot
    pid_n * BLOCK_N / SLOT and (-inf, 0) in the tile's other slots; a split tile's last piece writes
    one partial per SLOT columns."""
    acc, offs_m, offs_n, pid_n = _gemm_tile(h_ptr, w_ptr, M, N, k_units, hm_units, wn_units, full_tiles,
                                            UNIT, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, SPLIT)
    PER_TILE: tl.constexpr = BLOCK_N // SLOT
    if SPLIT > 1:
        if tl.program_id(0) >= full_tiles:
            if _arrive(acc, ws_ptr, cnt_ptr, full_tiles, BLOCK_M, BLOCK_N, SPLIT):
                # chunks wholly past N map to slots past the last: skip them
                chunks = tl.minimum(tl.cdiv(N - pid_n * BLOCK_N, SLOT), PER_TILE)
                for c in range(chunks):
                    part = _gather(ws_ptr, full_tiles, c, BLOCK_M, BLOCK_N, SLOT, SPLIT)
                    cols = pid_n * BLOCK_N + c * SLOT + tl.arange(0, SLOT)
                    _lse_store(part, offs_m, cols, b_ptr, max_ptr, sum_ptr, M, N, slots,
                               pid_n * PER_TILE + c, SLOT, SLOT)
        else:
            _lse_store(acc, offs_m, offs_n, b_ptr, max_ptr, sum_ptr, M, N, slots, pid_n * PER_TILE,
                       BLOCK_N, SLOT)
    else:
        _lse_store(acc, offs_m, offs_n, b_ptr, max_ptr, sum_ptr, M, N, slots, pid_n * PER_TILE, BLOCK_N, SLOT)


@triton.jit
def lse_combine_kernel(max_ptr, sum_ptr, y_ptr, M, slots,
                       BLOCK_R: tl.constexpr, BLOCK_S: tl.constexpr):
    """y[row] = max + log(sum) over the row's partials in all slots: running (max, sum) tiles merged
    element-wise per step, reduced across slots once after the loop."""
    LOG2E: tl.constexpr = 1.4426950408889634
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    row_mask = rows < M
    best = tl.full((BLOCK_S, BLOCK_R), float("-inf"), tl.float32)
    total = tl.zeros((BLOCK_S, BLOCK_R), dtype=tl.float32)
    for start in range(0, slots, BLOCK_S):
        s = start + tl.arange(0, BLOCK_S)
        mask = (s[:, None] < slots) & row_mask[None, :]
        at = s[:, None] * M + rows[None, :]
        m = tl.load(max_ptr + at, mask=mask, other=float("-inf"))
        e = tl.load(sum_ptr + at, mask=mask, other=0.0)
        new_best = tl.maximum(best, m)
        safe = tl.where(new_best == float("-inf"), 0.0, new_best)
        total = total * tl.exp2((best - safe) * LOG2E) + e * tl.exp2((m - safe) * LOG2E)
        best = new_best
    row_best = tl.max(best, axis=0)
    safe = tl.where(row_best == float("-inf"), 0.0, row_best)
    row_total = tl.sum(total * tl.exp2((best - safe[None, :]) * LOG2E), axis=0)
    row_total = tl.where(row_mask, row_total, 1.0)  # rows past M: keep log away from zero
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


def _sm_count(device):
    """SMs of the device; with no device, 132 (H100/H200) when compiling ahead of time, so the
    schedule is the one the GPU runs, and 4 under the interpreter, so small shapes reach the split
    tiles."""
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).multi_processor_count
    return 4 if os.environ.get("TRITON_INTERPRET") == "1" else 132


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
        linear_sigmoid_kernel[_grid(M, H, K, sms)](
            x, w1, b1, h, ws, counts, M, H, K // UNIT, x.stride(0) // UNIT, w1.stride(0) // UNIT, Hp // UNIT,
            sms, UNIT=UNIT, SLOT=SLOT)

        slots = triton.cdiv(N, SLOT)
        part_max = torch.empty((slots, M), device=x.device, dtype=torch.float32)
        part_sum = torch.empty((slots, M), device=x.device, dtype=torch.float32)
        linear_lse_partial_kernel[_grid(M, N, Hp, sms)](
            h, w2, b2, part_max, part_sum, ws, counts[COUNTERS:], M, N, Hp // UNIT, Hp // UNIT,
            w2.stride(0) // UNIT, slots, sms, UNIT=UNIT, SLOT=SLOT)

        y = torch.empty((M,), device=x.device, dtype=x.dtype)
        lse_combine_kernel[(triton.cdiv(M, 128),)](part_max, part_sum, y, M, slots,
                                                   BLOCK_R=128, BLOCK_S=16, num_warps=4)
        return y
