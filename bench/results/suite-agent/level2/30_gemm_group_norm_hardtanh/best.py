"""Linear + GroupNorm + Hardtanh (round 3): groups whose width is neither a power of two nor a whole
number of 128-channel slices take a GEMM over plain tiles and a GroupNorm pass; the rest is round 2.

Round 2's brief: cases 0-1 at 81% of the roofline, case 4 (3000 x 4000 -> 2000, 10 groups of 200
channels) the worst at 53% (0.1187 ms on the H100, eager 0.1315), "latency-bound, no finding
accounts for it"; rung 1 now reports nv.tile-misfit at the dot (best.py:98). The IR facts for case 4
show why, and it is arithmetic, not a slow loop: its 240 programs are 128x256 tiles of which a
program owns one group, so 56 of every 256 columns are computed and thrown away (22% of the wgmma
work; the 128-wide slice configs waste the same, 128 + 128 for 200), and the 240 tiles are 1.82
waves on 132 SMs at one program per SM (238 registers, 197 KB of shared memory), so the SMs hold 2
tiles of time for 1.82 of work. The useful work is 3000 x 2000 / (128 x 256) = 183 tile-units, 1.39
per SM, against the 2 each SM runs: 0.70 of the time does useful work, and 0.70 x the 81% the same
main loop reaches on cases 0-1 (full tiles) is 56%: the measured 53%. Round 2's experiment (dots of
128 + 64 + 16 = 208 columns, 0.145 vs 0.143 ms) did not remove the padding: it swapped it for three
narrow wgmma chains that re-read x's tile from shared memory, and kept the 2 waves.

What changed: when a group is not a power of two and not a whole number of 128-channel slices
(case 4's 200; the test case's 20), the GEMM kernel runs with FUSED off: its tiles are the plain
GEMM tiles of any config (the group no longer decides the tile), the epilogue is the bias added to
the fp32 accumulator and rounded once to fp16 into y (the reference holds h in fp16 as well), and
group_norm_hardtanh_rows_kernel then normalises y in place, one [rows, group] block per program
(16 rows of 200 channels here, 4096 slots), read once into registers, fp32 mean and centred
variance, affine and Hardtanh on the way out. On case 4, 128x128 tiles give 24 x 16 = 384 tiles of
half a unit each, 2.91 per SM: about 1.5 units of time for the 1.39 of work (0.92 of it useful
instead of 0.70); 64x256 gives 376 (2.85 per SM); 128x256 and 256x128 192 (2 waves again: the tuner
times them all). What the same 128x128 TMA loop costs is measured on this run's H100: case 1 runs
512 of them (K = 4096, 3 stages, two programs per SM) in 0.111 ms, 28.7 us of an SM per tile, and
case 3 runs 384 (K = 6000, 4 stages, one per SM) in 3 waves of 48.5 us. Scaled to K = 4000, case 4's
GEMM would take 84-97 us, plus the pass (12 MB read and written back, 1880 programs of 56
registers, 128-bit loads and stores, much of it from L2: ~6-10 us): about 0.09-0.105 ms against
0.119. `ladder ir --facts --case 4`: plain-tile configs at 90-199 registers, none spilled (128x128 at
3 stages 91 registers, two programs per SM; 256x128 158), TMA copies pipelined, wgmma for every dot,
128-bit stores of h. A 256x128 TMA config (the big tile's other orientation) joins the configs of
the unfused path only.

Unchanged, so cases 0-3 keep their kernels and configs: power-of-two groups (128 and 512 channels)
and 384-channel groups (three whole 128-wide slices, no padding) stay fused exactly as round 2 (whole
groups per program normalised from the accumulator, wide groups by slices with Chan's merge), TMA
operand boxes with the cp.async loop beside them for rows TMA cannot describe.
"""
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


def _config(m, n, k, s, w, tma):
    return triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8, "TMA": tma}, num_stages=s,
                         num_warps=w, pre_hook=_set_blocks)


def _configs():
    """Round 2's configs, then the ones only the unfused path uses (plain tiles, no statistics)."""
    TMA_ONLY = [(128, 256, 64, 4, 8), (128, 128, 64, 3, 8)]
    shapes = [(128, 256, 64, 3, 8), (128, 128, 64, 4, 8), (64, 256, 64, 4, 8), (128, 128, 64, 4, 4),
              (64, 128, 64, 4, 4)]
    best = [_config(m, n, k, s, w, tma) for tma in (True, False) for m, n, k, s, w in shapes + (TMA_ONLY if tma else [])]
    unfused = [_config(256, 128, 64, 3, 8, True)]
    return best, unfused


_BEST_CONFIGS, _UNFUSED_CONFIGS = _configs()


def _prune(configs, named_args, **kwargs):
    """Fused, round 2's rule: groups wider than a tile are normalised from running statistics kept
    beside the accumulator, and there tiles of 128 fp32 accumulator registers per thread spill on
    sm_90 (left out); the unfused-only configs are left out too. Unfused, every config. TMA configs
    only where the operands have descriptors."""
    cpg_p = kwargs["CPG_P"]
    tma_ok = named_args["x_desc"] is not None
    if kwargs["FUSED"]:
        kept = [c for c in configs
                if not any(c is u for u in _UNFUSED_CONFIGS)
                and (cpg_p <= c.kwargs["BLOCK_N"] or c.kwargs["BLOCK_M"] * c.kwargs["BLOCK_N"] <= 64 * 32 * c.num_warps)]
    else:
        kept = list(configs)
    return [c for c in kept if tma_ok or not c.kwargs["TMA"]]


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


@triton.autotune(configs=_BEST_CONFIGS + _UNFUSED_CONFIGS, key=["M", "N", "K", "CPG", "FUSED"],
                 prune_configs_by={"early_config_prune": _prune})
@triton.jit
def linear_group_norm_hardtanh_kernel(
    x_desc, w_desc, x_ptr, w_ptr, b_ptr, gamma_ptr, beta_ptr, y_ptr,
    M, N, K, eps, min_val, max_val,
    stride_xm, stride_xk, stride_wn, stride_wk, stride_ym, stride_yn,
    CPG: tl.constexpr, CPG_P: tl.constexpr, FUSED: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    TMA: tl.constexpr,
):
    # Columns a program owns. Fused: G whole groups when they fit one tile, else one group in
    # slices. Unfused: a plain BLOCK_N-wide tile, wherever the groups fall.
    G: tl.constexpr = BLOCK_N // CPG_P if CPG_P <= BLOCK_N else 1
    COLS: tl.constexpr = G * CPG if FUSED else BLOCK_N
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, COLS)
    group = GROUP_M * tiles_n
    first_m = (pid // group) * GROUP_M
    rows_in_group = min(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % rows_in_group
    pid_n = (pid % group) // rows_in_group

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    m_mask = offs_m < M
    local = tl.arange(0, BLOCK_N)
    col0 = pid_n * COLS

    if not FUSED:
        # h = x @ W.T + b rounded once to fp16 (as the reference holds it); normalised afterwards by
        # group_norm_hardtanh_rows_kernel
        offs_n = col0 + local
        n_mask = offs_n < N
        acc = _tile_gemm(x_ptr, w_ptr, x_desc, w_desc, pid_m * BLOCK_M, col0, offs_m, offs_n, n_mask, M, K,
                         stride_xm, stride_xk, stride_wn, stride_wk, BLOCK_M, BLOCK_N, BLOCK_K, TMA)
        bias = tl.load(b_ptr + offs_n, mask=n_mask, other=0.0).to(tl.float32)
        h = acc + bias[None, :]
        tl.store(y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn, h.to(y_ptr.dtype.element_ty),
                 mask=m_mask[:, None] & n_mask[None, :])
    elif CPG_P <= BLOCK_N:
        offs_n = col0 + local
        n_mask = (local < COLS) & (offs_n < N)
        acc = _tile_gemm(x_ptr, w_ptr, x_desc, w_desc, pid_m * BLOCK_M, col0, offs_m, offs_n, n_mask, M, K,
                         stride_xm, stride_xk, stride_wn, stride_wk, BLOCK_M, BLOCK_N, BLOCK_K, TMA)
        bias = tl.load(b_ptr + offs_n, mask=n_mask, other=0.0).to(tl.float32)
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
        tl.store(y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn, y.to(y_ptr.dtype.element_ty),
                 mask=m_mask[:, None] & n_mask[None, :])
    else:
        SLICES: tl.constexpr = (CPG + BLOCK_N - 1) // BLOCK_N
        run_mean = tl.zeros((BLOCK_M,), dtype=tl.float32)
        run_m2 = tl.zeros((BLOCK_M,), dtype=tl.float32)
        for s in range(SLICES):
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
        y = torch.empty((M, N), device=x.device, dtype=x.dtype)

        def grid(meta):
            if not fused:
                return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)
            per_program = (meta["BLOCK_N"] // cpg_p) * cpg if cpg_p <= meta["BLOCK_N"] else cpg
            return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, per_program),)

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
