"""Linear + GroupNorm + Hardtanh in one kernel (round 2): the GEMM's operands now come through TMA
descriptors instead of per-thread masked cp.async; everything else is round 1's kernel.

Round 1 runs all five cases at 43-71% of the roofline, "latency-bound" with no finding; the worst
is case 4 (3000 x 4000 -> 2000, 10 groups of 200 channels, 0.147 ms against eager's 0.132). Its IR
(`ladder ir --facts --case 4` on best.py) is clean: grid 240 programs of 128x256 (one whole group
per program, 200 of 256 columns used), 1.82 waves on 132 SMs, 237 registers, no spills, wgmma
[16, 256, 16], 128-bit cp.async for x and W (best.py:56-57, masked: 4000 is not a multiple of 64),
2 bar.sync per K step (best.py:56). What limits it, measured on an H100 (no H200 was free):
- not the padded columns: a variant that computes exactly the group's 200 columns (dots of 128 +
  64 + 16 sharing the x tile, no spills) ran 0.145 ms against 0.143 ms for the padded 128x256 tile;
- not the partial wave: 240 tiles leave a tail of 108 on 132 SMs, too many to split along K
  (132 // 108 = 1), and the 1.82 waves cost at most 10%;
- the main loop: 63 K steps of 128x256x64 take 72 us per wave, 1.1 us a step, about twice the
  wgmma time of the tile; Nsight Compute gives the kernel 46% SM (tensor) throughput and 18%
  issue-slot use. Every case shows the same per-step cost (case 1's 128x256 tiles 1.09 us a step,
  case 0's 128x128 slices 0.53 us).

Here x and W are read through host TensorDescriptors: each K step is two TMA box loads (BLOCK_M x
64 of x, BLOCK_N x 64 of W) into the pipeline's shared-memory buffers with mbarrier waits, no
per-thread addresses, masks or cp.async groups; the hardware's zero fill covers rows past M, W rows
past N (and past the group) and the K tail, so the loop needs no masked last step. The boxes follow
the config (a pre-hook). On the H100, case 4 ran 0.125 ms (was 0.145; eager 0.132) with Nsight
Compute's SM throughput at 59%; case 0 0.233 (was 0.269), case 1 0.122 (0.139), case 2 0.113
(0.124), case 3 0.148 (0.166) ms. Two TMA-only configs join the autotuned set: 128x256 at 4 stages
(198 KB of shared memory) and 128x128 at 3 stages (99 KB); neither spills. The pointer loop
stays, as configs of its own, for tensors TMA cannot describe (rows not 16-byte aligned, such as
in_features = 70 or 99): the pruner drops the TMA configs there.

Kept from round 1: every program owns whole groups for a block of rows; groups up to BLOCK_N wide
are normalised from the fp32 accumulator in registers (y the only write), wider groups (384, 512
channels) by a loop over BLOCK_N slices, each stored once, the row statistics merged with Chan's
update and the slices normalised in place from L2; h rounded to fp16 before the statistics; grouped
(GROUP_M = 8) program order; the configs that spill beside the running statistics pruned.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor


def _set_blocks(nargs):
    """The descriptors' boxes follow the config: BLOCK_M x BLOCK_K of x, BLOCK_N x BLOCK_K of W."""
    if nargs["x_desc"] is not None:
        nargs["x_desc"].block_shape = [nargs["BLOCK_M"], nargs["BLOCK_K"]]
        nargs["w_desc"].block_shape = [nargs["BLOCK_N"], nargs["BLOCK_K"]]


def _configs():
    TMA_ONLY = [(128, 256, 64, 4, 8), (128, 128, 64, 3, 8)]
    shapes = [(128, 256, 64, 3, 8), (128, 128, 64, 4, 8), (64, 256, 64, 4, 8), (128, 128, 64, 4, 4),
              (64, 128, 64, 4, 4)]
    return [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8, "TMA": tma}, num_stages=s,
                          num_warps=w, pre_hook=_set_blocks)
            for tma in (True, False) for m, n, k, s, w in shapes + (TMA_ONLY if tma else [])]


def _prune(configs, named_args, **kwargs):
    """Groups wider than a tile are normalised from running statistics kept beside the accumulator:
    there, tiles of 128 fp32 accumulator registers per thread spill on sm_90 and are left out."""
    cpg_p = kwargs["CPG_P"]
    tma_ok = named_args["x_desc"] is not None
    return [c for c in configs
            if (cpg_p <= c.kwargs["BLOCK_N"] or c.kwargs["BLOCK_M"] * c.kwargs["BLOCK_N"] <= 64 * 32 * c.num_warps)
            and (tma_ok or not c.kwargs["TMA"])]


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


@triton.autotune(configs=_configs(), key=["M", "N", "K", "CPG"], prune_configs_by={"early_config_prune": _prune})
@triton.jit
def linear_group_norm_hardtanh_kernel(
    x_desc, w_desc, x_ptr, w_ptr, b_ptr, gamma_ptr, beta_ptr, y_ptr,
    M, N, K, eps, min_val, max_val,
    stride_xm, stride_xk, stride_wn, stride_wk, stride_ym, stride_yn,
    CPG: tl.constexpr, CPG_P: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    TMA: tl.constexpr,
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
        cpg = N // self.group_norm.num_groups
        cpg_p = triton.next_power_of_2(cpg)
        y = torch.empty((M, N), device=x.device, dtype=x.dtype)

        def grid(meta):
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
            CPG=cpg, CPG_P=cpg_p,
        )
        return y
