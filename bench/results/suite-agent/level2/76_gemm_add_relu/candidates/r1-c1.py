"""GEMM + bias + ReLU: an autotuned, pipelined Hopper GEMM whose operand loads are 16-byte
asynchronous copies on every case, the bias add and the ReLU on the fp32 accumulator before the one
store.

The initial version already fused the epilogue but ran fixed 64x128x32 tiles (4 warps) in row-major
program order (nv.gemm-no-grouped-order). On the 7777-wide case its rows start 15554 bytes apart,
so Triton could prove no alignment: every operand load was a lone bf16 ld.global and the dot loop
was not pipelined at all (nv.scalar-access, nv.unpipelined-loop). Here:
- K and the operand row strides reach the kernel in units of UNIT elements, the largest of 8, 4
  that divides them (multiplied back inside), so the alignment that holds is visible to Triton and
  each load is a 16-byte (8-byte) cp.async the pipeliner can stage; where only 2- or 1-element
  units divide them (in_features = 7777) no copy wider than 4 bytes exists, so x and W are first
  copied once into rows zero-padded to a multiple of 64 elements (one bandwidth pass of about
  210 MB for the 7777-wide case, roughly a third of that GEMM's time at full speed, against a loop
  of single-element loads) and the GEMM runs on the copies with 16-byte loads and no K mask at all;
- tiles are Hopper-sized (wgmma, 3-4 stages, 4-8 warps; every one compiles for sm_90 without
  spills, 8-byte rows included), autotuned per shape, and taken in groups of GROUP_M row tiles so
  that consecutive programs read the same W tiles from L2; K steps are unmasked where BLOCK_K
  divides K, and edge rows and columns are clamped onto valid ones in the loop instead of masked
  (only the store masks them);
- y = relu(acc + bias) is rounded to bf16 once (the reference rounds the product, then the sum);
  the output row stride also reaches the kernel in units (8 where out_features is a multiple of 8),
  so the stores are 16 bytes wide where they can be.
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


@triton.autotune(configs=_configs(), key=["M", "n_units", "k_units", "UNIT", "Y_UNIT"])
@triton.heuristics({"EVEN_K": lambda a: (a["k_units"] * a["UNIT"]) % a["BLOCK_K"] == 0})
@triton.jit
def gemm_bias_relu_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
    M, n_units, k_units, xm_units, wn_units, ym_units,
    UNIT: tl.constexpr, Y_UNIT: tl.constexpr,
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
    y = tl.maximum(acc + bias[None, :], 0.0)
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
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False, dtype=torch.bfloat16)
        self.bias = nn.Parameter(torch.randn(bias_shape, dtype=torch.bfloat16))

    def forward(self, x):
        M = x.shape[0]
        w = self.gemm.weight
        N = w.shape[0]
        unit = _unit(x, w)
        if unit < 4:  # no copy wider than 4 bytes: pad the rows once (zeros add nothing to the dot)
            x, w = _padded(x), _padded(w)
            unit = 8
        K = x.shape[1]
        y = torch.empty((M, N), device=x.device, dtype=x.dtype)
        y_unit = _unit(y)

        def grid(meta):
            return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)

        gemm_bias_relu_kernel[grid](
            x, w, self.bias, y, M, N // y_unit, K // unit, x.stride(0) // unit, w.stride(0) // unit,
            y.stride(0) // y_unit, UNIT=unit, Y_UNIT=y_unit,
        )
        return y
