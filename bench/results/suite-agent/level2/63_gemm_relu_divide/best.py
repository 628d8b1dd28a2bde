"""Linear + ReLU + divide in one autotuned, pipelined Hopper GEMM: the bias, the ReLU and the division
run on the fp32 accumulator before the only store.

The initial version wrote the linear output h (M x N bf16) and launched a second, elementwise kernel
that read it back for the ReLU and the division (nv.unfused-epilogue): on the 4096 x 5000 case
41 MB written and read again beside a GEMM that needs only x, W and y. Its GEMM ran a fixed
128x64x32 tile on 4 warps in row-major program order (nv.gemm-no-grouped-order). Here:
- the epilogue adds the bias, takes max(v, 0) and multiplies by 1/divisor (0.5, exact for
  divisor = 2) on the fp32 accumulator and rounds to bf16 once, where the reference rounds after
  the linear and again after the division: the result differs only at bf16 rounding level;
- tiles are Hopper-sized (wgmma, BLOCK_K 64, 3-4 stages, 4-8 warps), autotuned per shape, and
  taken in groups of GROUP_M row tiles so that consecutive programs read the same W tiles from L2;
- K and the operand row strides reach the kernel in units of UNIT elements, the largest of 8, 4, 2,
  1 that divides them, and N and the output row stride in units of Y_UNIT, multiplied back
  inside: on the 5000-wide case (not a multiple of 16, so Triton would otherwise see no alignment)
  the stores and their column masks stay 16 bytes wide, and every operand load is a 16-byte
  cp.async copy the pipeliner stages; K steps are unmasked where BLOCK_K divides K (every case),
  and edge rows and columns are clamped onto valid ones in the loop rather than masked (only the
  store masks them).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


def _configs():
    shapes = [(128, 256, 64, 3, 8), (256, 128, 64, 3, 8), (128, 128, 64, 4, 8), (128, 128, 64, 4, 4),
              (64, 256, 64, 4, 8), (128, 64, 64, 4, 4), (64, 128, 64, 4, 4)]
    return [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8}, num_stages=s, num_warps=w)
            for m, n, k, s, w in shapes]


def _fit(configs, named_args, **kwargs):
    """Every timed case has rows that are multiples of 8 elements. Below that (odd widths) the narrower
    copies and stores need an address each: the tiles of 4096 accumulator elements per warp (128x256
    and 256x128 on 8 warps, 128x128 on 4) spill there on sm_90, so they go."""
    if kwargs["UNIT"] == 8 and kwargs["Y_UNIT"] == 8:
        return configs
    return [c for c in configs if c.kwargs["BLOCK_M"] * c.kwargs["BLOCK_N"] <= 2048 * c.num_warps]


@triton.autotune(configs=_configs(), key=["M", "n_units", "k_units", "UNIT", "Y_UNIT"],
                 prune_configs_by={"early_config_prune": _fit})
@triton.heuristics({"EVEN_K": lambda a: (a["k_units"] * a["UNIT"]) % a["BLOCK_K"] == 0})
@triton.jit
def linear_relu_divide_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
    M, n_units, k_units, xm_units, wn_units, ym_units,
    inv_divisor,
    UNIT: tl.constexpr, Y_UNIT: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    EVEN_K: tl.constexpr,
):
    N = n_units * Y_UNIT
    K = k_units * UNIT
    stride_xm = xm_units * UNIT
    stride_wn = wn_units * UNIT
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
    y = tl.maximum(acc + bias[None, :], 0.0) * inv_divisor
    y_ptrs = y_ptr + offs_m.to(tl.int64)[:, None] * stride_ym + offs_n[None, :]
    tl.store(y_ptrs, y.to(y_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & n_mask[None, :])


def _unit(*tensors):
    """Largest of 8, 4, 2, 1 elements that divides every row length, row stride and base offset (in
    elements), so that the kernel can see the alignment of its rows."""
    for unit in (8, 4, 2, 1):
        if all(t.shape[1] % unit == 0 and t.stride(0) % unit == 0
               and t.data_ptr() % (unit * t.element_size()) == 0 for t in tensors):
            return unit
    return 1


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, divisor):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, dtype=torch.bfloat16)
        self.divisor = divisor

    def forward(self, x):
        w, b = self.linear.weight, self.linear.bias
        if x.stride(1) != 1:
            x = x.contiguous()
        if w.stride(1) != 1:
            w = w.contiguous()
        M, K = x.shape
        N = w.shape[0]
        y = torch.empty((M, N), device=x.device, dtype=torch.bfloat16)
        unit = _unit(x, w)
        y_unit = _unit(y)

        def grid(meta):
            return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)

        linear_relu_divide_kernel[grid](
            x, w, b, y, M, N // y_unit, K // unit, x.stride(0) // unit, w.stride(0) // unit, y.stride(0) // y_unit,
            1.0 / float(self.divisor), UNIT=unit, Y_UNIT=y_unit,
        )
        return y
