"""Linear + scale + training-mode BatchNorm, with the statistics gathered in the GEMM's epilogue.

The initial version spent most of its time outside the GEMM: its BatchNorm gave each program 64
features and walked the whole batch three times (N/64 programs, 128 for N=8192: most SMs idle), and
its GEMM used 64x64x32 tiles (too small for wgmma to keep the tensor cores busy).

Here the GEMM (autotuned Hopper-sized tiles, grouped tile order for L2 reuse) stores h and, from its
fp32 accumulator, each tile's per-feature mean and M2 (squared deviations from the tile's own mean,
so no E[h^2]-E[h]^2 cancellation). The second kernel combines a feature's tile statistics (Chan's
formula) and normalises a 2-D block of h: h is read once, y written once, with as many programs as
tiles.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


def _configs():
    shapes = [(128, 256, 64, 3, 8), (128, 128, 64, 4, 4), (128, 128, 64, 4, 8), (64, 128, 64, 4, 4),
              (128, 64, 64, 4, 4)]
    return [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8}, num_stages=s, num_warps=w)
            for m, n, k, s, w in shapes]


@triton.autotune(configs=_configs(), key=["M", "N", "K"])
@triton.jit
def linear_scale_stats_kernel(
    x_ptr, w_ptr, b_ptr, s_ptr, y_ptr, mean_ptr, m2_ptr,
    M, N, K,
    stride_xm, stride_xk, stride_wn, stride_wk, stride_ym, stride_yn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    STATS_ROWS: tl.constexpr,
):
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * tiles_n
    first_m = (pid // group) * GROUP_M
    rows_in_group = min(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % rows_in_group
    pid_n = (pid % group) // rows_in_group

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :] * stride_xk
    w_ptrs = w_ptr + offs_k[:, None] * stride_wk + offs_n[None, :] * stride_wn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        left = K - k * BLOCK_K
        x = tl.load(x_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < left), other=0.0)
        w = tl.load(w_ptrs, mask=(offs_k[:, None] < left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(x, w, acc)
        x_ptrs += BLOCK_K * stride_xk
        w_ptrs += BLOCK_K * stride_wk

    n_mask = offs_n < N
    row_mask = offs_m < M
    bias = tl.load(b_ptr + offs_n, mask=n_mask, other=0.0).to(tl.float32)
    scale = tl.load(s_ptr + offs_n, mask=n_mask, other=0.0).to(tl.float32)
    h = (acc + bias[None, :]) * scale[None, :]
    mask = row_mask[:, None] & n_mask[None, :]
    tl.store(y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn, h.to(y_ptr.dtype.element_ty), mask=mask)

    # Statistics per 64-row slice of the tile, so that their layout does not depend on the config
    # the tuner chose: slice s holds rows [64 s, 64 s + 64).
    SLICES: tl.constexpr = BLOCK_M // STATS_ROWS
    slices = pid_m * SLICES + tl.arange(0, SLICES)
    counts = tl.minimum(tl.maximum(M - slices * STATS_ROWS, 0), STATS_ROWS).to(tl.float32)
    value = tl.reshape(tl.where(mask, h, 0.0), (SLICES, STATS_ROWS, BLOCK_N))
    inside = tl.reshape(mask, (SLICES, STATS_ROWS, BLOCK_N))
    mean = tl.sum(value, axis=1) / tl.maximum(counts, 1.0)[:, None]
    diff = tl.where(inside, value - mean[:, None, :], 0.0)
    stats = slices[:, None] * N + offs_n[None, :]
    kept = (counts > 0)[:, None] & n_mask[None, :]
    tl.store(mean_ptr + stats, mean, mask=kept)
    tl.store(m2_ptr + stats, tl.sum(diff * diff, axis=1), mask=kept)


@triton.jit
def batch_norm_apply_kernel(
    h_ptr, gamma_ptr, beta_ptr, y_ptr, mean_ptr, m2_ptr,
    M, N, stride_row, n_tiles, eps,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, TILE_STEP: tl.constexpr, STATS_ROWS: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < N
    weighted = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for first in range(0, n_tiles, TILE_STEP):
        tiles = first + tl.arange(0, TILE_STEP)
        both = (tiles < n_tiles)[:, None] & col_mask[None, :]
        counts = tl.minimum(tl.maximum(M - tiles * STATS_ROWS, 0), STATS_ROWS).to(tl.float32)
        means = tl.load(mean_ptr + tiles[:, None] * N + cols[None, :], mask=both, other=0.0)
        weighted += tl.sum(counts[:, None] * means, axis=0)
    mean = weighted / M
    m2 = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for first in range(0, n_tiles, TILE_STEP):
        tiles = first + tl.arange(0, TILE_STEP)
        both = (tiles < n_tiles)[:, None] & col_mask[None, :]
        counts = tl.minimum(tl.maximum(M - tiles * STATS_ROWS, 0), STATS_ROWS).to(tl.float32)
        means = tl.load(mean_ptr + tiles[:, None] * N + cols[None, :], mask=both, other=0.0)
        m2s = tl.load(m2_ptr + tiles[:, None] * N + cols[None, :], mask=both, other=0.0)
        shift = tl.where(both, means - mean[None, :], 0.0)
        m2 += tl.sum(m2s + counts[:, None] * shift * shift, axis=0)
    rstd = 1.0 / tl.sqrt(m2 / M + eps)
    gamma = tl.load(gamma_ptr + cols, mask=col_mask, other=0.0).to(tl.float32)
    beta = tl.load(beta_ptr + cols, mask=col_mask, other=0.0).to(tl.float32)
    a = rstd * gamma
    c = beta - mean * a

    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    mask = (rows[:, None] < M) & col_mask[None, :]
    offsets = rows[:, None] * stride_row + cols[None, :]
    h = tl.load(h_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + offsets, (h * a[None, :] + c[None, :]).to(y_ptr.dtype.element_ty), mask=mask)


STATS_ROWS = 64  # rows per statistics slice: every config's BLOCK_M is a multiple of it


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale_shape, eps=1e-5, momentum=0.1):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, dtype=torch.float16)
        self.scale = nn.Parameter(torch.randn(scale_shape, dtype=torch.float16))
        self.bn = nn.BatchNorm1d(out_features, eps=eps, momentum=momentum, dtype=torch.float16)
        with torch.no_grad():
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        M, K = x.shape
        w, b = self.gemm.weight, self.gemm.bias
        N = w.shape[0]
        max_tiles = triton.cdiv(M, STATS_ROWS)
        h = torch.empty((M, N), device=x.device, dtype=x.dtype)
        means = torch.empty((max_tiles, N), device=x.device, dtype=torch.float32)
        m2s = torch.empty_like(means)

        def grid(meta):
            return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)

        linear_scale_stats_kernel[grid](
            x, w, b, self.scale, h, means, m2s, M, N, K,
            x.stride(0), x.stride(1), w.stride(0), w.stride(1), h.stride(0), h.stride(1),
            STATS_ROWS=STATS_ROWS,
        )
        y = torch.empty_like(h)
        block_n = 64
        batch_norm_apply_kernel[(triton.cdiv(M, 64), triton.cdiv(N, block_n))](
            h, self.bn.weight, self.bn.bias, y, means, m2s, M, N, h.stride(0), max_tiles,
            self.bn.eps, BLOCK_M=64, BLOCK_N=block_n, TILE_STEP=16, STATS_ROWS=STATS_ROWS,
            num_warps=4,
        )
        return y
