"""Linear + Swish + bias + GroupNorm in one kernel, its operands now through TMA descriptors.

The best (the agent's round 2) runs four cases at 49-69% of the roofline and 4000 x 3000 -> 3000
with 30 groups of 100 channels at 28%, where eager (cuBLAS, then GroupNorm) is ahead (0.294 vs
0.333 ms) and torch.compile reaches 57% of the floor. Its findings name nv.int64-index; its loop
still carries the masked, clamped per-thread operand copies of every edge tile, and a tile of 100-
or 200-channel groups is an edge in N on every program (its W rows past the tile's whole groups
are clamped reads). What changed:
- x and W come through TMA descriptors in [BLOCK, BLOCK_K] boxes as they lie (W's box transposed
  in shared memory for the dot), from the tile's first row and first channel: rows past M and N
  and K steps past K arrive as zeros from the hardware, so the loop has no masks, no clamps and
  no per-thread pointers (the channels of the next group that a 256-wide box also reads are
  computed and left out by the epilogue's mask, as before); the cp.async configs stay beside the
  TMA ones so the autotuner keeps whichever is faster per size;
- x and W are copied into rows zero-padded to a multiple of 8 elements only where their rows are
  not 16-byte aligned (none of these cases), as TMA requires, so UNIT is always 8.
Kept: tiles that span whole groups, Swish and the extra bias on the fp32 accumulator, power-of-two
groups reduced at once and other groups in masked passes, the output rows' Y_UNIT, grouped order.

"""
import torch
import torch.nn as nn
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

UNIT = 8  # fp16 elements per 16 bytes: x's and W's rows always hold whole units (padded where not)


def _set_blocks(nargs):
    """The descriptors' block shapes follow the config (TMA boxes of BLOCK_M x BLOCK_K of x and
    BLOCK_N x BLOCK_K of W)."""
    nargs["x_desc"].block_shape = [nargs["BLOCK_M"], nargs["BLOCK_K"]]
    nargs["w_desc"].block_shape = [nargs["BLOCK_N"], nargs["BLOCK_K"]]


def _configs():
    # (BLOCK_M, BLOCK_N, BLOCK_K, stages, warps, TMA)
    shapes = [(128, 256, 64, 3, 8, True), (128, 128, 64, 4, 8, True), (64, 256, 64, 4, 8, True),
              (128, 128, 64, 4, 4, True), (64, 128, 64, 4, 4, True),
              (128, 256, 64, 3, 8, False), (128, 128, 64, 4, 8, False), (64, 256, 64, 4, 8, False)]
    return [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8, "TMA": tma}, num_stages=s,
                          num_warps=w, pre_hook=_set_blocks)
            for m, n, k, s, w, tma in shapes]


def _fits(configs, named_args, **kwargs):
    """Configs whose tile holds at least one whole group; for groups of other than a power-of-two size
    not the 128x256 tile on 8 warps, whose masked per-group pass spills there (856 B on sm_90)."""
    power_of_two = kwargs["CPG"] == kwargs["CPG_P"]
    fitting = [c for c in configs if c.kwargs["BLOCK_N"] >= kwargs["CPG_P"]
               and (power_of_two or c.kwargs["BLOCK_M"] * c.kwargs["BLOCK_N"] <= 2048 * c.num_warps)]
    if not fitting:
        raise ValueError(f"groups of {kwargs['CPG']} channels exceed every tile")
    return fitting


@triton.autotune(configs=_configs(), key=["M", "n_units", "k_units", "CPG", "UNIT", "Y_UNIT"],
                 prune_configs_by={"early_config_prune": _fits})
@triton.heuristics({"EVEN_K": lambda a: (a["k_units"] * a["UNIT"]) % a["BLOCK_K"] == 0})
@triton.jit
def linear_swish_group_norm_kernel(
    x_desc, w_desc, x_ptr, w_ptr, b_ptr, extra_bias_ptr, gamma_ptr, beta_ptr, y_ptr,
    M, n_units, k_units, xm_units, wn_units, ym_units, eps,
    CPG: tl.constexpr, CPG_P: tl.constexpr, UNIT: tl.constexpr, Y_UNIT: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    TMA: tl.constexpr, EVEN_K: tl.constexpr,
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
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    if TMA:
        # TMA boxes: rows of x past M, rows of W past N and K steps past K arrive as zeros
        for k in range(tl.cdiv(K, BLOCK_K)):
            x = x_desc.load([pid_m * BLOCK_M, k * BLOCK_K])
            w = w_desc.load([pid_n * (G * CPG), k * BLOCK_K])
            acc = tl.dot(x, w.T, acc)
    else:
        offs_k = tl.arange(0, BLOCK_K)
        rows = tl.minimum(offs_m, M - 1)
        cols = tl.minimum(offs_n, N - 1)
        x_ptrs = x_ptr + rows.to(tl.int64)[:, None] * stride_xm + offs_k[None, :]
        w_ptrs = w_ptr + offs_k[:, None] + cols.to(tl.int64)[None, :] * stride_wn
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


def _aligned_rows(t):
    """``t`` itself when its rows start on 16-byte boundaries and hold whole 16-byte units (what TMA
    and 16-byte cp.async need), else a copy whose rows are zero-padded to a multiple of UNIT (the
    zeros add nothing to the product)."""
    rows, cols = t.shape
    if cols % UNIT == 0 and t.stride(0) % UNIT == 0 and t.stride(1) == 1 and t.data_ptr() % 16 == 0:
        return t
    padded = triton.cdiv(cols, UNIT) * UNIT
    out = torch.empty((rows, padded), device=t.device, dtype=t.dtype)
    pad_rows_kernel[(triton.cdiv(rows, 16), triton.cdiv(padded, 256))](
        t, out, rows, cols, t.stride(0), t.stride(1), padded // UNIT, BLOCK_R=16, BLOCK_K=256, UNIT=UNIT,
        num_warps=4)
    return out


def _unit(*tensors):
    """Largest of 8, 4, 2, 1 elements that divides every row length, row stride and base offset (in
    elements), so that the kernel can see the alignment of the output's rows."""
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
        M, N = x.shape[0], w.shape[0]
        x, w = _aligned_rows(x), _aligned_rows(w)
        K = x.shape[1]
        cpg = N // self.group_norm.num_groups
        cpg_p = triton.next_power_of_2(cpg)
        y = torch.empty((M, N), device=x.device, dtype=x.dtype)
        y_unit = _unit(y)
        # block shapes are set per config by _set_blocks
        x_desc = TensorDescriptor(x, [M, K], [x.stride(0), 1], [64, 64])
        w_desc = TensorDescriptor(w, [N, K], [w.stride(0), 1], [64, 64])

        def grid(meta):
            per_tile = (meta["BLOCK_N"] // cpg_p) * cpg
            return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, per_tile),)

        linear_swish_group_norm_kernel[grid](
            x_desc, w_desc, x, w, self.matmul.bias, self.bias, self.group_norm.weight, self.group_norm.bias, y,
            M, N // y_unit, K // UNIT, x.stride(0) // UNIT, w.stride(0) // UNIT, y.stride(0) // y_unit,
            self.group_norm.eps, CPG=cpg, CPG_P=cpg_p, UNIT=UNIT, Y_UNIT=y_unit,
        )
        return y
