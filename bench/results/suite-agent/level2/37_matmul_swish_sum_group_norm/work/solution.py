"""Linear + Swish + bias + GroupNorm: groups of a power-of-two size stay fused into the GEMM's
epilogue; other group sizes take a GEMM over ordinary tiles and a GroupNorm pass over its output.

The best (the agent's round 3, TMA operands) runs the 4000 x 3000 -> 3000 case, 30 groups of 100
channels, at 35% of the roofline (0.280 ms on the H100 gate's timing, eager's cuBLAS and GroupNorm
0.311 ms, torch.compile 57% of the floor), against 55-78% on the four cases whose groups are 64 or
128 channels. Its source says why (best.py:45-54, 86-93, 120-128): a tile must hold whole groups,
so a 100-channel group takes a 128-wide slot, each tile computes 28 of every 128 channels only to
throw them away (22% of its wgmma work) and runs one masked mean-and-variance pass over the whole
tile per group, and tiles past 16K elements on 8 warps are pruned for such groups because those
passes spill them: the case runs on 128x128 or 64x256 tiles. Its GEMM is 72 GFLOP (0.09 ms at the
floor); its output is 24 MB (written and read back once more: 12 us at the HBM ceiling). What changed:
- where the groups are not a power of two, linear_swish_group_norm_kernel runs with FUSED off: its
  tiles are the plain GEMM tiles (every config, 128x256 and 256x128 included, none computing a
  discarded channel), its epilogue Swish + bias on the fp32 accumulator rounded once to fp16 into
  y (the reference holds that value in fp16 too), and group_norm_rows_kernel then normalizes y
  in place, one block of rows of one group per program (32 rows of 100 channels here, 4096 slots
  in all) read once into registers (fp32 statistics, centred variance), with the affine on the way out;
- the masked per-group passes are gone (no case takes them now), and a 256x128 tile joins the
  configs (fused groups of up to 128 channels fit it).
Kept: power-of-two groups reduced at once through a [BLOCK_M, groups, channels] reshape in the
epilogue of tiles spanning whole groups, TMA operand boxes with the cp.async configs beside them,
padding of rows not 16-byte aligned, the output rows' Y_UNIT, grouped order.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

UNIT = 8  # fp16 elements per 16 bytes: x's and W's rows always hold whole units (padded where not)
NORM_BLOCK = 4096  # elements per program of group_norm_rows_kernel (32 rows of a 128-channel slot: 32 a thread)


def _set_blocks(nargs):
    """The descriptors' block shapes follow the config (TMA boxes of BLOCK_M x BLOCK_K of x and
    BLOCK_N x BLOCK_K of W)."""
    nargs["x_desc"].block_shape = [nargs["BLOCK_M"], nargs["BLOCK_K"]]
    nargs["w_desc"].block_shape = [nargs["BLOCK_N"], nargs["BLOCK_K"]]


def _configs():
    # (BLOCK_M, BLOCK_N, BLOCK_K, stages, warps, TMA)
    shapes = [(128, 256, 64, 3, 8, True), (256, 128, 64, 3, 8, True), (128, 128, 64, 4, 8, True),
              (64, 256, 64, 4, 8, True),
              (128, 128, 64, 4, 4, True), (64, 128, 64, 4, 4, True),
              (128, 256, 64, 3, 8, False), (128, 128, 64, 4, 8, False), (64, 256, 64, 4, 8, False)]
    return [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8, "TMA": tma}, num_stages=s,
                          num_warps=w, pre_hook=_set_blocks)
            for m, n, k, s, w, tma in shapes]


def _fits(configs, named_args, **kwargs):
    """Fused, a tile must hold at least one whole group; unfused, every tile does."""
    if not kwargs["FUSED"]:
        return configs
    fitting = [c for c in configs if c.kwargs["BLOCK_N"] >= kwargs["CPG_P"]]
    if not fitting:
        raise ValueError(f"groups of {kwargs['CPG']} channels exceed every tile")
    return fitting


@triton.autotune(configs=_configs(), key=["M", "n_units", "k_units", "CPG", "FUSED", "UNIT", "Y_UNIT"],
                 prune_configs_by={"early_config_prune": _fits})
@triton.heuristics({"EVEN_K": lambda a: (a["k_units"] * a["UNIT"]) % a["BLOCK_K"] == 0})
@triton.jit
def linear_swish_group_norm_kernel(
    x_desc, w_desc, x_ptr, w_ptr, b_ptr, extra_bias_ptr, gamma_ptr, beta_ptr, y_ptr,
    M, n_units, k_units, xm_units, wn_units, ym_units, eps,
    CPG: tl.constexpr, CPG_P: tl.constexpr, FUSED: tl.constexpr, UNIT: tl.constexpr, Y_UNIT: tl.constexpr,
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
    tiles_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * tiles_n
    first_m = (pid // group) * GROUP_M
    rows_in_group = min(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % rows_in_group
    pid_n = (pid % group) // rows_in_group

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    local = tl.arange(0, BLOCK_N)
    offs_n = pid_n * BLOCK_N + local
    n_mask = offs_n < N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    if TMA:
        # TMA boxes: rows of x past M, rows of W past N and K steps past K arrive as zeros
        for k in range(tl.cdiv(K, BLOCK_K)):
            x = x_desc.load([pid_m * BLOCK_M, k * BLOCK_K])
            w = w_desc.load([pid_n * BLOCK_N, k * BLOCK_K])
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
    if FUSED:  # whole power-of-two groups fill the tile (BLOCK_N of them a multiple): reduce each at once
        h3 = tl.reshape(h, (BLOCK_M, G, CPG))
        centred = h3 - (tl.sum(h3, axis=2) / CPG)[:, :, None]
        rstd = 1.0 / tl.sqrt(tl.sum(centred * centred, axis=2) / CPG + eps)
        normed = tl.reshape(centred * rstd[:, :, None], (BLOCK_M, BLOCK_N))
        gamma = tl.load(gamma_ptr + offs_n, mask=n_mask, other=0.0).to(tl.float32)
        beta = tl.load(beta_ptr + offs_n, mask=n_mask, other=0.0).to(tl.float32)
        y = normed * gamma[None, :] + beta[None, :]
    else:  # h itself, normalized afterwards by group_norm_rows_kernel
        y = h
    tl.store(y_ptr + offs_m.to(tl.int64)[:, None] * stride_ym + offs_n[None, :], y.to(y_ptr.dtype.element_ty),
             mask=(offs_m[:, None] < M) & n_mask[None, :])


@triton.jit
def group_norm_rows_kernel(y_ptr, gamma_ptr, beta_ptr, M, ym_units, eps,
                           CPG: tl.constexpr, CPG_P: tl.constexpr, Y_UNIT: tl.constexpr, BLOCK_R: tl.constexpr):
    """GroupNorm of y in place, one [BLOCK_R rows, one group] block per program: the block is read
    once into registers, its mean and centred variance taken there in fp32, and written back
    normalized with the group's affine."""
    stride_ym = ym_units * Y_UNIT
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    local = tl.arange(0, CPG_P)
    inside = local < CPG
    cols = tl.program_id(1) * CPG + local
    mask = (rows[:, None] < M) & inside[None, :]
    ptrs = y_ptr + rows.to(tl.int64)[:, None] * stride_ym + cols[None, :]
    h = tl.load(ptrs, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(h, axis=1) / CPG
    centred = tl.where(inside[None, :], h - mean[:, None], 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(centred * centred, axis=1) / CPG + eps)
    gamma = tl.load(gamma_ptr + cols, mask=inside, other=0.0).to(tl.float32)
    beta = tl.load(beta_ptr + cols, mask=inside, other=0.0).to(tl.float32)
    y = centred * rstd[:, None] * gamma[None, :] + beta[None, :]
    tl.store(ptrs, y.to(y_ptr.dtype.element_ty), mask=mask)


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

        fused = cpg == cpg_p

        def grid(meta):
            return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)

        linear_swish_group_norm_kernel[grid](
            x_desc, w_desc, x, w, self.matmul.bias, self.bias, self.group_norm.weight, self.group_norm.bias, y,
            M, N // y_unit, K // UNIT, x.stride(0) // UNIT, w.stride(0) // UNIT, y.stride(0) // y_unit,
            self.group_norm.eps, CPG=cpg, CPG_P=cpg_p, FUSED=fused, UNIT=UNIT, Y_UNIT=y_unit,
        )
        if not fused:
            rows = max(1, NORM_BLOCK // cpg_p)
            group_norm_rows_kernel[(triton.cdiv(M, rows), self.group_norm.num_groups)](
                y, self.group_norm.weight, self.group_norm.bias, M, y.stride(0) // y_unit, self.group_norm.eps,
                CPG=cpg, CPG_P=cpg_p, Y_UNIT=y_unit, BLOCK_R=rows, num_warps=4,
            )
        return y
