"""Linear + Swish + bias + GroupNorm in one kernel: each GEMM tile spans whole groups of channels,
so its epilogue normalises them before anything reaches memory.

The initial version wrote the activation h (M x N fp16) and read it back for a GroupNorm kernel of
one program per (row, group): for the first case that is 512 MB of traffic beside a 320 MB GEMM,
and its GEMM used 128x64x32 tiles without pipelining hints. Here a tile of BLOCK_N columns holds
G = BLOCK_N // CPG_P whole groups (CPG_P: the group size rounded up to a power of two; a group of
100 channels fills 100 of 128 columns), the epilogue computes every row's mean and variance per
group from the fp32 accumulator (two passes in registers: no cancellation), and y is the only
write. Tiles are ordered in groups of rows for L2 reuse of the weight; configs are autotuned.
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


def _fits(configs, named_args, **kwargs):
    """Configs whose tile holds at least one whole group."""
    fitting = [c for c in configs if c.kwargs["BLOCK_N"] >= kwargs["CPG_P"]]
    if not fitting:
        raise ValueError(f"groups of {kwargs['CPG']} channels exceed every tile")
    return fitting


@triton.autotune(configs=_configs(), key=["M", "N", "K", "CPG"], prune_configs_by={"early_config_prune": _fits})
@triton.jit
def linear_swish_group_norm_kernel(
    x_ptr, w_ptr, b_ptr, extra_bias_ptr, gamma_ptr, beta_ptr, y_ptr,
    M, N, K, eps,
    stride_xm, stride_xk, stride_wn, stride_wk, stride_ym, stride_yn,
    CPG: tl.constexpr, CPG_P: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    G: tl.constexpr = BLOCK_N // CPG_P
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, G * CPG)
    group = GROUP_M * tiles_n
    first_m = (pid // group) * GROUP_M
    rows_in_group = min(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % rows_in_group
    pid_n = (pid % group) // rows_in_group

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    local = tl.arange(0, BLOCK_N)
    offs_n = pid_n * (G * CPG) + local
    n_mask = (local < G * CPG) & (offs_n < N)
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

    lin = acc + tl.load(b_ptr + offs_n, mask=n_mask, other=0.0).to(tl.float32)[None, :]
    h = lin * tl.sigmoid(lin) + tl.load(extra_bias_ptr + offs_n, mask=n_mask, other=0.0).to(tl.float32)[None, :]
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
    tl.store(y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn, y.to(y_ptr.dtype.element_ty),
             mask=(offs_m[:, None] < M) & n_mask[None, :])


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, num_groups, bias_shape):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features, dtype=torch.float16)
        self.bias = nn.Parameter(torch.randn(bias_shape, dtype=torch.float16))
        self.group_norm = nn.GroupNorm(num_groups, out_features, dtype=torch.float16)
        with torch.no_grad():
            self.group_norm.weight.uniform_(0.5, 1.5)
            self.group_norm.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        M, K = x.shape
        w = self.matmul.weight
        N = w.shape[0]
        cpg = N // self.group_norm.num_groups
        cpg_p = triton.next_power_of_2(cpg)
        y = torch.empty((M, N), device=x.device, dtype=x.dtype)

        def grid(meta):
            per_tile = (meta["BLOCK_N"] // cpg_p) * cpg
            return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, per_tile),)

        linear_swish_group_norm_kernel[grid](
            x, w, self.matmul.bias, self.bias, self.group_norm.weight, self.group_norm.bias, y,
            M, N, K, self.group_norm.eps,
            x.stride(0), x.stride(1), w.stride(0), w.stride(1), y.stride(0), y.stride(1),
            CPG=cpg, CPG_P=cpg_p,
        )
        return y
