"""Linear + GroupNorm + Hardtanh in one kernel: every program owns whole groups of channels for a
block of rows, so the normalisation and the clamp run in the GEMM's epilogue.

The initial version wrote the linear output h (M x N fp16), then read it back in a GroupNorm +
Hardtanh kernel of one program per (row, group); its GEMM used fixed 64x64x32 tiles in row-major
program order, without pipelining hints. Here:

* groups that fit a tile (CPG_P, the group size rounded up to a power of two, <= BLOCK_N: the
  cases with 128 and 200 channels per group) are normalised in registers: a tile of BLOCK_N columns
  holds G = BLOCK_N // CPG_P whole groups, every row's mean and variance per group come from the
  accumulator (two passes, no cancellation), and y is the only write;
* wider groups (384 and 512 channels) are covered by one program looping over BLOCK_N-wide slices
  of its group: each slice's GEMM result is stored once and its per-row mean / sum of squared
  deviations merged into running statistics (Chan's pairwise update), then the program reloads its
  own slices, still in L2, and normalises them in place. h never makes a DRAM round trip through a
  second launch.

h is rounded to fp16 before the statistics, as the reference's fp16 linear output is. Tiles are
autotuned Hopper sizes (wgmma, BLOCK_K 64, 3-4 stages) in groups of GROUP_M row blocks so that
consecutive programs share W's slices in L2; for groups wider than a tile, the configs with 128
accumulator registers per thread (128x256 on 8 warps, 128x128 on 4) spill on sm_90 beside the
running statistics and are pruned. The M x N stores (and the wide groups' read-backs) are 128-bit
where the separate GroupNorm kernel's were scalar; only the per-column bias, gamma and beta vectors
load narrower.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


def _configs():
    shapes = [(128, 256, 64, 3, 8), (128, 128, 64, 4, 8), (64, 256, 64, 4, 8), (128, 128, 64, 4, 4),
              (64, 128, 64, 4, 4)]
    return [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8}, num_stages=s, num_warps=w)
            for m, n, k, s, w in shapes]


def _prune(configs, named_args, **kwargs):
    """Groups wider than a tile are normalised from running statistics kept beside the accumulator:
    there, tiles of 128 fp32 accumulator registers per thread spill on sm_90 and are left out."""
    cpg_p = kwargs["CPG_P"]
    return [c for c in configs
            if cpg_p <= c.kwargs["BLOCK_N"] or c.kwargs["BLOCK_M"] * c.kwargs["BLOCK_N"] <= 64 * 32 * c.num_warps]


@triton.jit
def _tile_gemm(x_ptr, w_ptr, offs_m, offs_n, n_mask, M, K, stride_xm, stride_xk, stride_wn, stride_wk,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
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


@triton.autotune(configs=_configs(), key=["M", "N", "K", "CPG"], prune_configs_by={"early_config_prune": _prune})
@triton.jit
def linear_group_norm_hardtanh_kernel(
    x_ptr, w_ptr, b_ptr, gamma_ptr, beta_ptr, y_ptr,
    M, N, K, eps, min_val, max_val,
    stride_xm, stride_xk, stride_wn, stride_wk, stride_ym, stride_yn,
    CPG: tl.constexpr, CPG_P: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    # Columns a program owns: G whole groups when they fit one tile, else one group in slices.
    G: tl.constexpr = BLOCK_N // CPG_P if CPG_P <= BLOCK_N else 1
    COLS: tl.constexpr = G * CPG
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

    if CPG_P <= BLOCK_N:
        offs_n = col0 + local
        n_mask = (local < COLS) & (offs_n < N)
        acc = _tile_gemm(x_ptr, w_ptr, offs_m, offs_n, n_mask, M, K, stride_xm, stride_xk, stride_wn,
                         stride_wk, BLOCK_M, BLOCK_N, BLOCK_K)
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
            acc = _tile_gemm(x_ptr, w_ptr, offs_m, offs_n, n_mask, M, K, stride_xm, stride_xk, stride_wn,
                             stride_wk, BLOCK_M, BLOCK_N, BLOCK_K)
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
        cpg = N // self.group_norm.num_groups
        cpg_p = triton.next_power_of_2(cpg)
        y = torch.empty((M, N), device=x.device, dtype=x.dtype)

        def grid(meta):
            per_program = (meta["BLOCK_N"] // cpg_p) * cpg if cpg_p <= meta["BLOCK_N"] else cpg
            return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, per_program),)

        linear_group_norm_hardtanh_kernel[grid](
            x, w, self.gemm.bias, self.group_norm.weight, self.group_norm.bias, y,
            M, N, K, self.group_norm.eps, self.hardtanh_min, self.hardtanh_max,
            x.stride(0), x.stride(1), w.stride(0), w.stride(1), y.stride(0), y.stride(1),
            CPG=cpg, CPG_P=cpg_p,
        )
        return y
