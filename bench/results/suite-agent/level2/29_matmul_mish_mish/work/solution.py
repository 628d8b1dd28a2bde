"""Linear + Mish + Mish: an autotuned, pipelined Hopper GEMM whose operand loads are provably as wide
as the rows allow on every case, both Mish applications on the fp32 accumulator with one
exponential each.

The initial version already fused the epilogue but ran fixed 128x64x32 tiles (4 warps) in row-major
program order (nv.gemm-no-grouped-order). On the 4500-wide case its rows start 9000 bytes apart, so
Triton could prove no alignment at all: every operand load was a lone fp16 ld.global and the dot
loop was not pipelined (nv.scalar-access, nv.unpipelined-loop), 10% of roofline. Here:
- the K extent and the row strides reach the kernel in units of UNIT elements, the largest of 8, 4,
  2, 1 that divides them (8 on the power-of-two cases, 4 on the 4500-wide one), multiplied back
  inside, so each operand load is a 16-byte (8-byte on the 4500-wide case) cp.async the pipeliner
  can stage, with no padded copy of x or W;
- tiles are Hopper-sized (wgmma, 3-4 stages, 4-8 warps), autotuned per shape, and taken in groups of
  GROUP_M row tiles so that consecutive programs read the same W tiles from L2; K steps are
  unmasked where BLOCK_K divides K, and edge rows and columns are clamped onto valid ones in the
  loop instead of masked (only the store masks them);
- mish(v) = v tanh(softplus(v)) uses tanh(log(1 + t)) = n / (n + 2), n = t (t + 2), t = e^v: one
  exponential and one division instead of exp, log, exp and a division, with t taken at
  min(v, 20) (where the ratio is 1 in fp32) so nothing overflows; the epilogue runs on the two
  column halves of the accumulator in turn, which keeps the 128x256 and 256x128 tiles (the
  widest in the space) free of register spills on sm_90. On the 4500-wide case the 8-byte copies need more
  address registers and the tiles of 4096 accumulator elements per warp still spill there, so the
  autotuner's space is pruned to the smaller tiles for that alignment.
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
    """Below 16-byte rows (the 4500-wide case) the narrower copies' addressing needs more registers:
    the tiles of 4096 accumulator elements per warp (128x256 and 256x128 on 8 warps, 128x128 on 4)
    spill there on sm_90, so they go."""
    if kwargs["UNIT"] == 8:
        return configs
    return [c for c in configs if c.kwargs["BLOCK_M"] * c.kwargs["BLOCK_N"] <= 2048 * c.num_warps]


@triton.jit
def mish(v):
    t = tl.exp(tl.minimum(v, 20.0))
    n = t * (t + 2.0)
    return v * (n / (n + 2.0))


@triton.autotune(configs=_configs(), key=["M", "N", "k_units", "UNIT"], prune_configs_by={"early_config_prune": _fit})
@triton.heuristics({"EVEN_K": lambda a: (a["k_units"] * a["UNIT"]) % a["BLOCK_K"] == 0})
@triton.jit
def linear_mish_mish_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
    M, N, k_units, xm_units, wn_units, stride_ym,
    UNIT: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    EVEN_K: tl.constexpr,
):
    K = k_units * UNIT
    stride_xm = xm_units * UNIT
    stride_wn = wn_units * UNIT
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

    # the epilogue in two column halves: the whole tile's mish temporaries spill at 128x256
    HALF: tl.constexpr = BLOCK_N // 2
    acc0, acc1 = tl.split(tl.permute(tl.reshape(acc, (BLOCK_M, 2, HALF)), (0, 2, 1)))
    m_mask = offs_m[:, None] < M
    y_rows = y_ptr + offs_m.to(tl.int64)[:, None] * stride_ym
    for h in tl.static_range(2):
        part = acc0 if h == 0 else acc1
        offs_h = pid_n * BLOCK_N + h * HALF + tl.arange(0, HALF)
        h_mask = offs_h < N
        bias = tl.load(b_ptr + offs_h, mask=h_mask, other=0.0).to(tl.float32)
        y = mish(mish(part + bias[None, :]))
        tl.store(y_rows + offs_h[None, :], y.to(y_ptr.dtype.element_ty), mask=m_mask & h_mask[None, :])


def _unit(*tensors):
    """Largest of 8, 4, 2, 1 elements that divides every row length, row stride and base offset (in
    elements), so that the kernel can see the alignment of its rows."""
    for unit in (8, 4, 2, 1):
        if all(t.stride(1) == 1 and t.shape[1] % unit == 0 and t.stride(0) % unit == 0
               and t.data_ptr() % (unit * t.element_size()) == 0 for t in tensors):
            return unit
    return 1


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, dtype=torch.float16)

    def forward(self, x):
        M, K = x.shape
        w, b = self.linear.weight, self.linear.bias
        N = w.shape[0]
        unit = _unit(x, w)
        y = torch.empty((M, N), device=x.device, dtype=x.dtype)

        def grid(meta):
            return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)

        linear_mish_mish_kernel[grid](
            x, w, b, y, M, N, K // unit, x.stride(0) // unit, w.stride(0) // unit, y.stride(0), UNIT=unit,
        )
        return y
