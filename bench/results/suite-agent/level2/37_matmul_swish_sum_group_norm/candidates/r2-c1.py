"""Linear + Swish + bias + GroupNorm in one kernel whose operand rows the compiler can see are aligned.

Round 1 fused the GroupNorm into the GEMM epilogue (tiles span whole groups, y the only write) and
was 1.75x faster over the cases, but lost on the 4000 x 3000 -> 3000 case (0.82 vs 0.71 ms). The
brief's split puts 89% of that case's initial forward in its GEMM at 15% of the GEMM's own floor,
and its IR facts show why for both versions: K = 3000 and the row strides of x and W are not
multiples of 16, so Triton proves no alignment and every operand load is a lone 2-byte access
(nv.scalar-access, nv.unpipelined-loop). Here:
- K and the operand row strides reach the kernel in units of UNIT elements (the largest of 8, 4, 2,
  1 dividing them, multiplied back inside), so 3000-element rows get 16-byte cp.async copies the
  pipeliner stages, and K steps are unmasked where BLOCK_K divides K;
- N and the output row stride likewise in units of Y_UNIT, so the stores of the 3000-wide rows
  (tiles of 100 columns) are 8-byte wide instead of 2;
- rows and columns past the edge are clamped onto valid ones in the loop (the store masks them);
- where the group size is a power of two (four of the five cases) the epilogue reshapes the tile to
  [BLOCK_M, groups, channels] and reduces each group at once, instead of a masked full-tile pass per
  group, which kept four fp32 tiles live and made the widest tiles spill;
- groups of other sizes (100 channels) keep the masked pass, over the one or two groups a tile holds.
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
    """Configs whose tile holds at least one whole group; for groups of other than a power-of-two size
    not the 128x256 tile on 8 warps, whose masked per-group pass spills there (856 B on sm_90)."""
    fitting = [c for c in configs if c.kwargs["BLOCK_N"] >= kwargs["CPG_P"]
               and (kwargs["CPG"] == kwargs["CPG_P"] or c.kwargs["BLOCK_M"] * c.kwargs["BLOCK_N"] <= 2048 * c.num_warps)]
    if not fitting:
        raise ValueError(f"groups of {kwargs['CPG']} channels exceed every tile")
    return fitting


@triton.autotune(configs=_configs(), key=["M", "n_units", "k_units", "CPG", "UNIT", "Y_UNIT"],
                 prune_configs_by={"early_config_prune": _fits})
@triton.heuristics({"EVEN_K": lambda a: (a["k_units"] * a["UNIT"]) % a["BLOCK_K"] == 0})
@triton.jit
def linear_swish_group_norm_kernel(
    x_ptr, w_ptr, b_ptr, extra_bias_ptr, gamma_ptr, beta_ptr, y_ptr,
    M, n_units, k_units, xm_units, wn_units, ym_units, eps,
    CPG: tl.constexpr, CPG_P: tl.constexpr, UNIT: tl.constexpr, Y_UNIT: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    EVEN_K: tl.constexpr,
):
    N = n_units * Y_UNIT
    K = k_units * UNIT
    stride_xm = xm_units * UNIT
    stride_wn = wn_units * UNIT
    stride_ym = ym_units * Y_UNIT
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
    rows = tl.minimum(offs_m, M - 1)
    cols = tl.minimum(offs_n, N - 1)
    x_ptrs = x_ptr + rows.to(tl.int64)[:, None] * stride_xm + offs_k[None, :]
    w_ptrs = w_ptr + offs_k[:, None] + cols.to(tl.int64)[None, :] * stride_wn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(tl.cdiv(K, BLOCK_K)):
        if EVEN_K:
            x = tl.load(x_ptrs)
            w = tl.load(w_ptrs)
        else:
            left = K - k * BLOCK_K
            x = tl.load(x_ptrs, mask=offs_k[None, :] < left, other=0.0)
            w = tl.load(w_ptrs, mask=offs_k[:, None] < left, other=0.0)
        acc = tl.dot(x, w, acc)
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K

    lin = acc + tl.load(b_ptr + offs_n, mask=n_mask, other=0.0).to(tl.float32)[None, :]
    h = lin * tl.sigmoid(lin) + tl.load(extra_bias_ptr + offs_n, mask=n_mask, other=0.0).to(tl.float32)[None, :]
    if CPG == CPG_P:  # whole power-of-two groups fill the tile: reduce each at once
        h3 = tl.reshape(h, (BLOCK_M, G, CPG))
        centred = h3 - (tl.sum(h3, axis=2) / CPG)[:, :, None]
        rstd = 1.0 / tl.sqrt(tl.sum(centred * centred, axis=2) / CPG + eps)
        normed = tl.reshape(centred * rstd[:, :, None], (BLOCK_M, BLOCK_N))
    else:  # groups of other sizes: G (one or two) masked passes
        member = local // CPG
        normed = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for g in tl.static_range(G):
            inside = (member == g) & n_mask
            group_mean = tl.sum(tl.where(inside[None, :], h, 0.0), axis=1) / CPG
            centred = tl.where(inside[None, :], h - group_mean[:, None], 0.0)
            group_rstd = 1.0 / tl.sqrt(tl.sum(centred * centred, axis=1) / CPG + eps)
            normed = tl.where(inside[None, :], centred * group_rstd[:, None], normed)
    gamma = tl.load(gamma_ptr + offs_n, mask=n_mask, other=0.0).to(tl.float32)
    beta = tl.load(beta_ptr + offs_n, mask=n_mask, other=0.0).to(tl.float32)
    y = normed * gamma[None, :] + beta[None, :]
    tl.store(y_ptr + offs_m.to(tl.int64)[:, None] * stride_ym + offs_n[None, :], y.to(y_ptr.dtype.element_ty),
             mask=(offs_m[:, None] < M) & n_mask[None, :])


def _unit(*tensors):
    """Largest of 8, 4, 2, 1 elements that divides every row length, row stride and base offset (in
    elements), so that the kernel can see the alignment of its rows."""
    for unit in (8, 4, 2, 1):
        if all(t.shape[1] % unit == 0 and t.stride(0) % unit == 0
               and t.data_ptr() % (unit * t.element_size()) == 0 for t in tensors):
            return unit
    return 1


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
        w = self.matmul.weight
        if x.stride(1) != 1:
            x = x.contiguous()
        if w.stride(1) != 1:
            w = w.contiguous()
        M, K = x.shape
        N = w.shape[0]
        cpg = N // self.group_norm.num_groups
        cpg_p = triton.next_power_of_2(cpg)
        y = torch.empty((M, N), device=x.device, dtype=x.dtype)
        unit, y_unit = _unit(x, w), _unit(y)

        def grid(meta):
            per_tile = (meta["BLOCK_N"] // cpg_p) * cpg
            return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, per_tile),)

        linear_swish_group_norm_kernel[grid](
            x, w, self.matmul.bias, self.bias, self.group_norm.weight, self.group_norm.bias, y,
            M, N // y_unit, K // unit, x.stride(0) // unit, w.stride(0) // unit, y.stride(0) // y_unit,
            self.group_norm.eps, CPG=cpg, CPG_P=cpg_p, UNIT=unit, Y_UNIT=y_unit,
        )
        return y
