"""Linear + scale + Hardtanh + GELU: an autotuned, pipelined Hopper GEMM whose operand loads are
16-byte asynchronous copies on every case, the whole chain on the fp32 accumulator before the one
fp16 store, and a GELU that costs seven FMAs because the Hardtanh bounds its input.

The initial version already fused the chain into the epilogue but ran one fixed 64x64x32 tile
(4 warps) on every shape (nv.hardcoded-config) in row-major program order
(nv.gemm-no-grouped-order). On the 1234 x 5678 x 4321 case its rows start 11356 bytes apart, so
Triton proved no alignment: every operand load, the bias load and the store were lone fp16
accesses, the dot loop was not pipelined at all and the kernel held 168 registers
(nv.scalar-access, nv.unpipelined-loop). Here:
- K and the operand row strides reach the kernel in units of UNIT elements, the largest of 8, 4
  that divides them (multiplied back inside), so the alignment that holds is visible to Triton and
  each load is a 16-byte (8-byte) cp.async the pipeliner stages. Where only 2-element units divide
  them (in_features = 5678) the copies would be 4 bytes wide: compiled for sm_90 that way the big
  tiles need 250 registers and 128x128 on 4 warps spills, so x and W are instead copied once into
  rows zero-padded to a multiple of 64 elements (one bandwidth pass of about 126 MB, roughly a
  third of that GEMM's time at full speed) and the GEMM runs on the copies with 16-byte loads and
  no K mask at all;
- tiles are Hopper-sized (wgmma, 3-4 stages, 4-8 warps), autotuned per shape, and taken in groups
  of GROUP_M row tiles so that consecutive programs read the same W tiles from L2; K steps are
  unmasked where BLOCK_K divides K, and edge rows and columns are clamped onto valid ones in the
  loop instead of masked (only the store masks them); the output row stride also reaches the kernel
  in units, so stores are 16 bytes wide where out_features is a multiple of 8;
- the epilogue computes v = clamp(s (acc + b), lo, hi) and GELU(v) in fp32 and rounds once (the
  reference rounds the linear output to fp16 first; s = 4 is a power of two, so that step differs
  by at most 4 half-ulps of the linear output, far inside fp16 tolerance). With lo, hi in [-1, 1]
  (this problem's values), GELU(v) = v/2 + v^2/2 P(v^2) with P erf's Maclaurin series to the v^12
  term, error under 2e-7: no exp, no division, and every tile in the space (up to 128x256 and
  256x128) compiles for sm_90 without spills. Wider Hardtanh bounds take the Abramowitz-Stegun
  erfc form instead, whose spilling tiles are pruned for that path.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

PAD = 64  # K is padded to a multiple of this (every config's BLOCK_K) when rows must be copied


def _configs():
    shapes = [(128, 256, 64, 3, 8), (256, 128, 64, 3, 8), (128, 128, 64, 4, 8), (128, 128, 64, 4, 4),
              (64, 256, 64, 4, 8), (128, 64, 64, 4, 4), (64, 128, 64, 4, 4)]
    return [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8}, num_stages=s, num_warps=w)
            for m, n, k, s, w in shapes]


def _fit(configs, named_args, **kwargs):
    """With the polynomial GELU every tile compiles without spills on sm_90. The general GELU (an exp
    and a division, taken only where the Hardtanh bounds exceed 1) spills at 4096 accumulator
    elements per warp (256x128 on 8 warps, 128x128 on 4) and fills all 255 registers at 128x256:
    those tiles go there."""
    if kwargs["BOUNDED"]:
        return configs
    return [c for c in configs if c.kwargs["BLOCK_M"] * c.kwargs["BLOCK_N"] <= 2048 * c.num_warps]


@triton.jit
def _gelu_bounded(v):
    """v / 2 (1 + erf(v / sqrt 2)) for |v| <= 1 as v / 2 + v^2 / 2 P(v^2), P the first seven terms of
    erf's Maclaurin series with the 1 / sqrt 2 folded in (error under 2e-7 in fp32 on [-1, 1]):
    seven FMAs, no exp, no division, no branch."""
    u = v * v
    p = 1.33193870326333e-06
    p = p * u - 1.888931251900723e-05
    p = p * u + 0.00023086937523231056
    p = p * u - 0.0023746564309609086
    p = p * u + 0.019947114020071634
    p = p * u - 0.13298076013381088
    p = p * u + 0.7978845608028653
    return 0.5 * v + 0.5 * u * p


@triton.jit
def _gelu(v):
    """v / 2 (1 + erf(v / sqrt 2)) for any v, 1 + erf taken as erfc(|z|) or 2 - erfc(|z|) in the
    Abramowitz-Stegun 7.1.26 form (absolute error under 1.5e-7): one exp and one division."""
    z = tl.abs(v) * 0.7071067811865476
    t = 1.0 / (1.0 + 0.3275911 * z)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    erfc = poly * tl.exp(-z * z)
    return 0.5 * v * tl.where(v >= 0, 2.0 - erfc, erfc)


@triton.autotune(configs=_configs(), key=["M", "n_units", "k_units", "UNIT", "Y_UNIT", "BOUNDED"],
                 prune_configs_by={"early_config_prune": _fit})
@triton.heuristics({"EVEN_K": lambda a: (a["k_units"] * a["UNIT"]) % a["BLOCK_K"] == 0})
@triton.jit
def linear_scale_hardtanh_gelu_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
    M, n_units, k_units, xm_units, wn_units, ym_units,
    scale, lo, hi,
    UNIT: tl.constexpr, Y_UNIT: tl.constexpr, BOUNDED: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    EVEN_K: tl.constexpr,
):
    K = k_units * UNIT
    stride_xm = xm_units * UNIT
    stride_wn = wn_units * UNIT
    N = n_units * Y_UNIT
    stride_ym = ym_units * Y_UNIT
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
    # rows and columns past the edge read the last valid one (their results are masked at the store)
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

    n_mask = offs_n < N
    bias = tl.load(b_ptr + offs_n, mask=n_mask, other=0.0).to(tl.float32)
    v = tl.minimum(tl.maximum((acc + bias[None, :]) * scale, lo), hi)
    y = _gelu_bounded(v) if BOUNDED else _gelu(v)
    tl.store(y_ptr + offs_m.to(tl.int64)[:, None] * stride_ym + offs_n[None, :], y.to(y_ptr.dtype.element_ty),
             mask=(offs_m[:, None] < M) & n_mask[None, :])


@triton.jit
def pad_rows_kernel(src_ptr, dst_ptr, R, K, stride_src, padded_units,
                    BLOCK_R: tl.constexpr, BLOCK_K: tl.constexpr, PAD: tl.constexpr):
    """dst[r, :K] = src[r, :K], dst[r, K:] = 0 for rows of padded_units * PAD elements."""
    padded = padded_units * PAD
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.program_id(1) * BLOCK_K + tl.arange(0, BLOCK_K)
    row_mask = rows[:, None] < R
    value = tl.load(src_ptr + rows.to(tl.int64)[:, None] * stride_src + cols[None, :],
                    mask=row_mask & (cols[None, :] < K), other=0.0)
    tl.store(dst_ptr + rows.to(tl.int64)[:, None] * padded + cols[None, :], value,
             mask=row_mask & (cols[None, :] < padded))


def _unit(*tensors):
    """Largest of 8, 4, 2, 1 elements that divides every row length, row stride and base offset (in
    elements), so that the kernel can see the alignment of its rows."""
    for unit in (8, 4, 2, 1):
        if all(t.stride(1) == 1 and t.shape[1] % unit == 0 and t.stride(0) % unit == 0
               and t.data_ptr() % (unit * t.element_size()) == 0 for t in tensors):
            return unit
    return 1


def _padded(t):
    """A copy of ``t`` whose rows are zero-padded to a multiple of PAD elements."""
    rows, cols = t.shape
    padded = triton.cdiv(cols, PAD) * PAD
    out = torch.empty((rows, padded), device=t.device, dtype=t.dtype)
    pad_rows_kernel[(triton.cdiv(rows, 16), triton.cdiv(padded, 256))](
        t, out, rows, cols, t.stride(0), padded // PAD, BLOCK_R=16, BLOCK_K=256, PAD=PAD, num_warps=4)
    return out


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scaling_factor, hardtanh_min, hardtanh_max):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, dtype=torch.float16)
        self.scaling_factor = scaling_factor
        self.hardtanh_min = hardtanh_min
        self.hardtanh_max = hardtanh_max

    def forward(self, x):
        M = x.shape[0]
        w, b = self.gemm.weight, self.gemm.bias
        N = w.shape[0]
        unit = _unit(x, w)
        if unit < 4:  # no copy wider than 4 bytes: pad the rows once (zeros add nothing to the dot)
            x, w = _padded(x), _padded(w)
            unit = 8
        K = x.shape[1]
        y = torch.empty((M, N), device=x.device, dtype=x.dtype)
        y_unit = _unit(y)
        # the Hardtanh bounds the GELU's input; within [-1, 1] a short polynomial is exact to fp32
        bounded = max(abs(self.hardtanh_min), abs(self.hardtanh_max)) <= 1.0

        def grid(meta):
            return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)

        linear_scale_hardtanh_gelu_kernel[grid](
            x, w, b, y, M, N // y_unit, K // unit, x.stride(0) // unit, w.stride(0) // unit,
            y.stride(0) // y_unit, float(self.scaling_factor), float(self.hardtanh_min), float(self.hardtanh_max),
            UNIT=unit, Y_UNIT=y_unit, BOUNDED=bounded,
        )
        return y
