"""Linear + GroupNorm + Hardtanh (round 4): beside round 3's configs, FLAT configs whose K loops run
back to back in one software-pipelined loop (`tl.range(..., flatten=True)`): persistent tile walks
for plain tiles and whole-group tiles, and a program's slices of one wide group.

Round 3's brief (H100): cases 2, 3 and 4 at 60.5%, 65.8% and 59.6% of the roofline, cases 0 and 1 at
80-83%. Its IR facts name the configs the autotuner kept, all 128x128x64 TMA tiles: case 1 (K = 4096,
512 tiles) at three stages and two programs per SM; case 0 (4 slices of a 512-channel group, K = 8192,
128 programs), case 2 (3 slices of a 384-channel group, K = 2048, 256 programs), case 3 (K = 6000,
384 tiles) and case 4's GEMM (K = 4000, 384 tiles, four warps) at four stages and one program per SM.
Per SM and K step of 64 that is 0.44 us on cases 0 and 1 (225.4 us for 512 steps; 109.2 us for
248), and 0.58 on case 2 (112.3 us for 2 x 96), 0.52 on case 3 (147.6 us for 3 x 94), 0.50 on case
4's GEMM (95.4 us for 3 x 63). The slow three restart a short K loop alone on their SM several times
(case 2 six times, 32 steps each; cases 3 and 4 three times): each restart fills the TMA pipeline
while nothing else runs there, and each epilogue (group statistics or h's store) runs with no loads
in flight; case 1 hides both behind its second program, case 0 has four restarts in 512 steps.
Against 0.44 us a step those are 4-8 us a restart: 28 us of case 2, 23 us of case 3, 12 us of case 4.
Rung 3 found the IR clean (wgmma, pipelined TMA copies, no spills), which is why no finding names
this.

What changed: a FLAT flag in the configs, TMA operands only. On plain tiles (case 4's unfused GEMM)
and whole-group tiles (cases 1 and 3), FLAT programs are persistent, SMs x PER_SM of them, each
walking tiles in GROUP_M order in one loop flattened with the K loop, so the next tile's TMA loads
are issued while this tile's epilogue runs, and a fill is paid once per program, not per tile; 384
tiles on 132 SMs stay 2.91 tiles each. On wide groups (cases 0 and 2), a FLAT program still owns one
group for BLOCK_M rows, but its slice loop is flattened with the K loop (96 steps in one pipeline on
case 2 instead of three of 32), the running statistics (Chan's merge) carried across it; its
normalise pass is unchanged. Flat configs: 128x128 at four stages (one program per SM) and at two
stages (two per SM where the registers allow: 107 on case 4's plain tiles; the whole-group and slice
epilogues take 153 and 198, one per SM), and for plain tiles only, 128x128 at four warps (case 4's
pick) and 128x256. The autotuner keeps per shape whichever is faster, so a shape whose restarts cost
nothing (cases 0 and 1) keeps round 3's config. `ladder ir --facts` on cases 2, 3 and 4 (sm_90):
every flat config's fused loop is software-pipelined with its two TMA copies (2-4 buffers), wgmma
for every dot, no spills (plain tiles 107-193 registers, 99-181 kB; whole groups 153-177; slices
198-200, 99-165 kB).

Unchanged: round 3's configs and code paths (fused whole groups from the accumulator, wide groups by
slices normalised from L2, plain tiles + group_norm_hardtanh_rows_kernel for groups neither a power
of two nor a multiple of 128), TMA boxes with the cp.async loop beside them for rows TMA cannot
describe.
"""
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

NORM_BLOCK = 4096  # channel slots per program of group_norm_hardtanh_rows_kernel (32 a thread at 4 warps)


def _set_blocks(nargs):
    """The descriptors' boxes follow the config: BLOCK_M x BLOCK_K of x, BLOCK_N x BLOCK_K of W."""
    if nargs["x_desc"] is not None:
        nargs["x_desc"].block_shape = [nargs["BLOCK_M"], nargs["BLOCK_K"]]
        nargs["w_desc"].block_shape = [nargs["BLOCK_N"], nargs["BLOCK_K"]]


def _config(m, n, k, s, w, tma, flat=False, per_sm=1):
    return triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8, "TMA": tma, "FLAT": flat,
                          "PER_SM": per_sm}, num_stages=s, num_warps=w, pre_hook=_set_blocks)


def _configs():
    """Round 2's configs and the flattened ones (TMA) for every path, then those only plain tiles take
    (round 3's 256x128, flat 128x128 at four warps and flat 128x256): (BLOCK_M, BLOCK_N, BLOCK_K,
    stages, warps, programs per SM)."""
    TMA_ONLY = [(128, 256, 64, 4, 8), (128, 128, 64, 3, 8)]
    shapes = [(128, 256, 64, 3, 8), (128, 128, 64, 4, 8), (64, 256, 64, 4, 8), (128, 128, 64, 4, 4),
              (64, 128, 64, 4, 4)]
    best = [_config(m, n, k, s, w, tma) for tma in (True, False) for m, n, k, s, w in shapes + (TMA_ONLY if tma else [])]
    flat = [_config(m, n, k, s, w, True, True, p) for m, n, k, s, w, p in [(128, 128, 64, 4, 8, 1), (128, 128, 64, 2, 8, 2)]]
    plain_only = [_config(256, 128, 64, 3, 8, True)] + [
        _config(m, n, k, s, w, True, True, p) for m, n, k, s, w, p in [(128, 128, 64, 4, 4, 1), (128, 256, 64, 3, 8, 1)]]
    return best + flat, plain_only


_CONFIGS, _PLAIN_ONLY_CONFIGS = _configs()


def _prune(configs, named_args, **kwargs):
    """Fused, round 2's rule: groups wider than a tile are normalised from running statistics kept
    beside the accumulator, and there tiles of 128 fp32 accumulator registers per thread spill on
    sm_90 (left out); so are the configs only plain tiles take. Unfused, every config. TMA configs only where the operands have
    descriptors."""
    cpg_p = kwargs["CPG_P"]
    tma_ok = named_args["x_desc"] is not None
    if kwargs["FUSED"]:
        kept = [c for c in configs
                if not any(c is u for u in _PLAIN_ONLY_CONFIGS)
                and (cpg_p <= c.kwargs["BLOCK_N"] or c.kwargs["BLOCK_M"] * c.kwargs["BLOCK_N"] <= 64 * 32 * c.num_warps)]
    else:
        kept = list(configs)
    return [c for c in kept if tma_ok or not c.kwargs["TMA"]]


@triton.jit
def _tile_coords(tile, M, N, COLS: tl.constexpr, BLOCK_M: tl.constexpr, GROUP_M: tl.constexpr):
    """(row tile, column tile) of a linear tile index, GROUP_M row tiles at a time so that
    consecutive tiles share W's columns in L2."""
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, COLS)
    group = GROUP_M * tiles_n
    first_m = (tile // group) * GROUP_M
    rows_in_group = min(tiles_m - first_m, GROUP_M)
    return first_m + (tile % group) % rows_in_group, (tile % group) // rows_in_group


@triton.jit
def _tile_gemm(x_ptr, w_ptr, x_desc, w_desc, row0, col0, offs_m, offs_n, n_mask, M, K, stride_xm, stride_xk,
               stride_wn, stride_wk, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
               TMA: tl.constexpr):
    if TMA:
        return _tile_gemm_tma(x_desc, w_desc, row0, col0, K, BLOCK_M, BLOCK_N, BLOCK_K)
    offs_k = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :] * stride_xk
    w_ptrs = w_ptr + offs_k[:, None] * stride_wk + offs_n[None, :] * stride_wn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        left = K - k * BLOCK_K
        x = tl.load(x_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < left), other=0.0)
        w = tl.load(w_ptrs, mask=(offs_k[:, None] < left) & n_mask[None, :], other=0.0)
        acc = tl.dot(x, w, acc)
        x_ptrs += BLOCK_K * stride_xk
        w_ptrs += BLOCK_K * stride_wk
    return acc


@triton.jit
def _tile_gemm_tma(x_desc, w_desc, row0, col0, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                   BLOCK_K: tl.constexpr):
    """The same tile through TMA boxes: rows past M, columns past N and the K tail arrive as zeros
    (the hardware's fill), so no masks or per-thread addresses."""
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = x_desc.load([row0, k * BLOCK_K])
        b = w_desc.load([col0, k * BLOCK_K])
        acc = tl.dot(a, b.T, acc)
    return acc


@triton.jit
def _tile(x_desc, w_desc, x_ptr, w_ptr, b_ptr, gamma_ptr, beta_ptr, y_ptr, pid_m, pid_n,
          M, N, K, eps, min_val, max_val, stride_xm, stride_xk, stride_wn, stride_wk, stride_ym, stride_yn,
          CPG: tl.constexpr, G: tl.constexpr, COLS: tl.constexpr, FUSED: tl.constexpr,
          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, TMA: tl.constexpr):
    """One tile of COLS columns: FUSED, G whole groups normalised from the accumulator (y the only
    write); else h = x @ W.T + b rounded once to fp16 (as the reference holds it), normalised
    afterwards by group_norm_hardtanh_rows_kernel."""
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    m_mask = offs_m < M
    local = tl.arange(0, BLOCK_N)
    offs_n = pid_n * COLS + local
    n_mask = (local < COLS) & (offs_n < N)
    acc = _tile_gemm(x_ptr, w_ptr, x_desc, w_desc, pid_m * BLOCK_M, pid_n * COLS, offs_m, offs_n, n_mask, M, K,
                     stride_xm, stride_xk, stride_wn, stride_wk, BLOCK_M, BLOCK_N, BLOCK_K, TMA)
    bias = tl.load(b_ptr + offs_n, mask=n_mask, other=0.0).to(tl.float32)
    y_ptrs = y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn
    if not FUSED:
        tl.store(y_ptrs, (acc + bias[None, :]).to(y_ptr.dtype.element_ty), mask=m_mask[:, None] & n_mask[None, :])
    else:
        h = (acc + bias[None, :]).to(tl.float16).to(tl.float32)
        member = local // CPG  # which of the tile's groups a column belongs to (G for padding)
        mean = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        rstd = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for g in tl.static_range(G):
            inside = (member == g) & n_mask
            group_mean = tl.sum(tl.where(inside[None, :], h, 0.0), axis=1) / CPG
            centred = tl.where(inside[None, :], h - group_mean[:, None], 0.0)
            group_rstd = 1.0 / tl.sqrt(tl.sum(centred * centred, axis=1) / CPG + eps)
            mean = tl.where(inside[None, :], group_mean[:, None], mean)
            rstd = tl.where(inside[None, :], group_rstd[:, None], rstd)
        gamma = tl.load(gamma_ptr + offs_n, mask=n_mask, other=0.0).to(tl.float32)
        beta = tl.load(beta_ptr + offs_n, mask=n_mask, other=0.0).to(tl.float32)
        y = (h - mean) * rstd * gamma[None, :] + beta[None, :]
        y = tl.minimum(tl.maximum(y, min_val), max_val)
        tl.store(y_ptrs, y.to(y_ptr.dtype.element_ty), mask=m_mask[:, None] & n_mask[None, :])


@triton.jit
def _wide_group(x_desc, w_desc, x_ptr, w_ptr, b_ptr, gamma_ptr, beta_ptr, y_ptr, pid_m, col0,
                M, K, eps, min_val, max_val, stride_xm, stride_xk, stride_wn, stride_wk, stride_ym, stride_yn,
                CPG: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                TMA: tl.constexpr, FLAT: tl.constexpr):
    """One group wider than a tile for BLOCK_M rows, in BLOCK_N-wide slices: each slice stored once
    as fp16 h and merged into the rows' running mean and M2 (Chan's update), then the group's slices
    normalised in place from L2. FLAT: the slice loop is flattened with the K loop, one pipeline."""
    SLICES: tl.constexpr = (CPG + BLOCK_N - 1) // BLOCK_N
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    m_mask = offs_m < M
    local = tl.arange(0, BLOCK_N)
    run_mean = tl.zeros((BLOCK_M,), dtype=tl.float32)
    run_m2 = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for s in tl.range(SLICES, flatten=FLAT):
        n_before = s * BLOCK_N
        n_here = min(CPG - n_before, BLOCK_N)
        offs_n = col0 + n_before + local
        n_mask = local < n_here
        acc = _tile_gemm(x_ptr, w_ptr, x_desc, w_desc, pid_m * BLOCK_M, col0 + n_before, offs_m, offs_n,
                         n_mask, M, K, stride_xm, stride_xk, stride_wn, stride_wk, BLOCK_M, BLOCK_N, BLOCK_K, TMA)
        bias = tl.load(b_ptr + offs_n, mask=n_mask, other=0.0).to(tl.float32)
        h16 = (acc + bias[None, :]).to(tl.float16)
        tl.store(y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn, h16.to(y_ptr.dtype.element_ty),
                 mask=m_mask[:, None] & n_mask[None, :])
        h = h16.to(tl.float32)
        here = n_here.to(tl.float32)
        total = (n_before + n_here).to(tl.float32)
        slice_mean = tl.sum(tl.where(n_mask[None, :], h, 0.0), axis=1) / here
        centred = tl.where(n_mask[None, :], h - slice_mean[:, None], 0.0)
        slice_m2 = tl.sum(centred * centred, axis=1)
        delta = slice_mean - run_mean
        run_mean = run_mean + delta * (here / total)
        run_m2 = run_m2 + slice_m2 + delta * delta * ((total - here) * here / total)
    rstd = 1.0 / tl.sqrt(run_m2 / CPG + eps)
    tl.debug_barrier()  # the slices stored above are read back by other threads of this program
    for s in range(SLICES):
        offs_n = col0 + s * BLOCK_N + local
        n_mask = local < CPG - s * BLOCK_N
        ptrs = y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn
        h = tl.load(ptrs, mask=m_mask[:, None] & n_mask[None, :], other=0.0).to(tl.float32)
        gamma = tl.load(gamma_ptr + offs_n, mask=n_mask, other=0.0).to(tl.float32)
        beta = tl.load(beta_ptr + offs_n, mask=n_mask, other=0.0).to(tl.float32)
        y = (h - run_mean[:, None]) * rstd[:, None] * gamma[None, :] + beta[None, :]
        y = tl.minimum(tl.maximum(y, min_val), max_val)
        tl.store(ptrs, y.to(y_ptr.dtype.element_ty), mask=m_mask[:, None] & n_mask[None, :])


@triton.autotune(configs=_CONFIGS + _PLAIN_ONLY_CONFIGS, key=["M", "N", "K", "CPG", "FUSED"],
                 prune_configs_by={"early_config_prune": _prune})
@triton.jit
def linear_group_norm_hardtanh_kernel(
    x_desc, w_desc, x_ptr, w_ptr, b_ptr, gamma_ptr, beta_ptr, y_ptr,
    M, N, K, eps, min_val, max_val,
    stride_xm, stride_xk, stride_wn, stride_wk, stride_ym, stride_yn,
    CPG: tl.constexpr, CPG_P: tl.constexpr, FUSED: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    TMA: tl.constexpr, FLAT: tl.constexpr, PER_SM: tl.constexpr,
):
    # Columns a tile owns. Fused: G whole groups when they fit one tile, else one group in slices.
    # Unfused: a plain BLOCK_N-wide tile, wherever the groups fall.
    G: tl.constexpr = BLOCK_N // CPG_P if CPG_P <= BLOCK_N else 1
    COLS: tl.constexpr = G * CPG if FUSED else BLOCK_N
    if FUSED and CPG_P > BLOCK_N:
        pid_m, pid_n = _tile_coords(tl.program_id(0), M, N, COLS, BLOCK_M, GROUP_M)
        _wide_group(x_desc, w_desc, x_ptr, w_ptr, b_ptr, gamma_ptr, beta_ptr, y_ptr, pid_m, pid_n * COLS,
                    M, K, eps, min_val, max_val, stride_xm, stride_xk, stride_wn, stride_wk, stride_ym, stride_yn,
                    CPG, BLOCK_M, BLOCK_N, BLOCK_K, TMA, FLAT)
    elif FLAT:
        # persistent: this program's tiles in one loop flattened with the K loop, so the next tile's
        # TMA loads fly while this tile's epilogue runs
        tiles = tl.cdiv(M, BLOCK_M) * tl.cdiv(N, COLS)
        for tile in tl.range(tl.program_id(0), tiles, tl.num_programs(0), flatten=True):
            pid_m, pid_n = _tile_coords(tile, M, N, COLS, BLOCK_M, GROUP_M)
            _tile(x_desc, w_desc, x_ptr, w_ptr, b_ptr, gamma_ptr, beta_ptr, y_ptr, pid_m, pid_n,
                  M, N, K, eps, min_val, max_val, stride_xm, stride_xk, stride_wn, stride_wk, stride_ym, stride_yn,
                  CPG, G, COLS, FUSED, BLOCK_M, BLOCK_N, BLOCK_K, TMA)
    else:
        pid_m, pid_n = _tile_coords(tl.program_id(0), M, N, COLS, BLOCK_M, GROUP_M)
        _tile(x_desc, w_desc, x_ptr, w_ptr, b_ptr, gamma_ptr, beta_ptr, y_ptr, pid_m, pid_n,
              M, N, K, eps, min_val, max_val, stride_xm, stride_xk, stride_wn, stride_wk, stride_ym, stride_yn,
              CPG, G, COLS, FUSED, BLOCK_M, BLOCK_N, BLOCK_K, TMA)


@triton.jit
def group_norm_hardtanh_rows_kernel(y_ptr, gamma_ptr, beta_ptr, M, stride_ym, stride_yn, eps, min_val, max_val,
                                    CPG: tl.constexpr, CPG_P: tl.constexpr, BLOCK_R: tl.constexpr):
    """GroupNorm + Hardtanh of y in place, one [BLOCK_R rows, one group] block per program: the block
    is read once into registers, its mean and centred variance taken there in fp32, and written back
    normalised with the group's affine and clamped."""
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    local = tl.arange(0, CPG_P)
    inside = local < CPG
    cols = tl.program_id(1) * CPG + local
    mask = (rows[:, None] < M) & inside[None, :]
    ptrs = y_ptr + rows[:, None] * stride_ym + cols[None, :] * stride_yn
    h = tl.load(ptrs, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(h, axis=1) / CPG
    centred = tl.where(inside[None, :], h - mean[:, None], 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(centred * centred, axis=1) / CPG + eps)
    gamma = tl.load(gamma_ptr + cols, mask=inside, other=0.0).to(tl.float32)
    beta = tl.load(beta_ptr + cols, mask=inside, other=0.0).to(tl.float32)
    y = centred * rstd[:, None] * gamma[None, :] + beta[None, :]
    y = tl.minimum(tl.maximum(y, min_val), max_val)
    tl.store(ptrs, y.to(y_ptr.dtype.element_ty), mask=mask)


def _tma_ready(t):
    """TMA needs a 16-byte aligned base, 16-byte aligned row strides and contiguous rows."""
    return t.stride(1) == 1 and (t.stride(0) * t.element_size()) % 16 == 0 and t.data_ptr() % 16 == 0


def _sm_count(device):
    """SMs of the device; with no device, 132 (H100/H200) when compiling ahead of time, so the
    persistent grid is the one the GPU runs, and 4 under the interpreter, so small shapes walk
    several tiles per program."""
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).multi_processor_count
    return 4 if os.environ.get("TRITON_INTERPRET") == "1" else 132


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, num_groups, hardtanh_min, hardtanh_max):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, dtype=torch.float16)
        self.group_norm = nn.GroupNorm(num_groups, out_features, dtype=torch.float16)
        with torch.no_grad():
            self.group_norm.weight.uniform_(0.5, 1.5)
            self.group_norm.bias.uniform_(-0.5, 0.5)
        self.hardtanh_min = hardtanh_min
        self.hardtanh_max = hardtanh_max

    def forward(self, x):
        M, K = x.shape
        w = self.gemm.weight
        N = w.shape[0]
        groups = self.group_norm.num_groups
        cpg = N // groups
        cpg_p = triton.next_power_of_2(cpg)
        # Fused where whole groups fill tiles or slices without padding: power-of-two groups, or
        # groups of whole 128-channel slices (384). Otherwise (200, 20, ...) plain tiles + a pass.
        fused = cpg == cpg_p or cpg % 128 == 0
        sms = _sm_count(x.device)
        y = torch.empty((M, N), device=x.device, dtype=x.dtype)

        def grid(meta):
            if fused and cpg_p > meta["BLOCK_N"]:  # one program per group and row block
                return (triton.cdiv(M, meta["BLOCK_M"]) * groups,)
            cols = (meta["BLOCK_N"] // cpg_p) * cpg if fused else meta["BLOCK_N"]
            tiles = triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, cols)
            return (min(tiles, sms * meta["PER_SM"]) if meta["FLAT"] else tiles,)

        x_desc = w_desc = None
        if _tma_ready(x) and _tma_ready(w):
            # boxes set per config by _set_blocks
            x_desc = TensorDescriptor(x, [M, K], [x.stride(0), 1], [64, 64])
            w_desc = TensorDescriptor(w, [N, K], [w.stride(0), 1], [64, 64])
        linear_group_norm_hardtanh_kernel[grid](
            x_desc, w_desc, x, w, self.gemm.bias, self.group_norm.weight, self.group_norm.bias, y,
            M, N, K, self.group_norm.eps, self.hardtanh_min, self.hardtanh_max,
            x.stride(0), x.stride(1), w.stride(0), w.stride(1), y.stride(0), y.stride(1),
            CPG=cpg, CPG_P=cpg_p, FUSED=fused,
        )
        if not fused:
            rows = max(1, NORM_BLOCK // cpg_p)
            group_norm_hardtanh_rows_kernel[(triton.cdiv(M, rows), groups)](
                y, self.group_norm.weight, self.group_norm.bias, M, y.stride(0), y.stride(1), self.group_norm.eps,
                self.hardtanh_min, self.hardtanh_max, CPG=cpg, CPG_P=cpg_p, BLOCK_R=rows,
                num_warps=4 if cpg_p <= NORM_BLOCK else 8,
            )
        return y
