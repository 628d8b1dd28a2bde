"""Linear + GELU + softmax: the GEMM's epilogue applies the GELU, writes the activation in fp16
straight into the output buffer and reduces its slice of every row to a partial (max, sum of exp);
a tiny pass merges the partials of each row and one flat pass normalises the output in place.

The initial version wrote the GELU output as an fp32 M x N buffer (32 MB for the first case) and
read it back for a softmax kernel that held each whole row in one program, so the activation
crossed memory as 4 + 4 bytes per element before the 2-byte result was written; its GEMM used fixed
64x64x32 tiles in row-major program order, and where in_features is 5000 (rows of x and W start on
8-byte, not 16-byte, boundaries as far as Triton can tell) its loads were single fp16s and the loop
was not pipelined at all. A row of 2048-8192 columns is too wide for one GEMM tile, so the softmax
is split in two passes over the output, with the least traffic that allows:
- the GEMM epilogue adds the bias, applies the GELU in fp32, rounds once to fp16 (as the reference
  does) and stores it where the result goes, then takes the row max and the sum of exp(g - max)
  over its BLOCK_N columns from the rounded values; partials sit in slots of 64 columns (a wider
  tile fills its other slots with (-inf, 0)), so later passes need no knowledge of the tile the
  autotuner picked;
- the GELU's 1 + erf(v / sqrt 2) is taken as erfc(|z|) or 2 - erfc(|z|) in the Abramowitz-Stegun
  form (absolute error under 1.5e-7, far below the fp16 rounding that follows): with libdevice's
  erf the 128x256 tile spilled in this epilogue on sm_90, with this one it does not; the configs
  that still spill (256x128 with 8 warps, 128x128 with 4) are left out;
- the merge pass turns a row's partials into its max and 1/sum (a few KB), and the normalise pass
  reads each fp16 element once and writes exp(g - max) / sum over it: 2 + 2 + 2 bytes per element
  in all instead of 4 + 4 + 2, and a flat index so that rows of odd length (out_features = 5001)
  still move in 16-byte vectors;
- K and the operand row strides reach the GEMM in units of 8 elements (multiplied back inside), so
  16-byte alignment of every operand row is provable and every load is a 128-bit async copy (x and
  W are copied to zero-padded rows only where K is not a multiple of 8: never on the timed cases);
  tiles are autotuned Hopper sizes (wgmma, 3-4 stages) in groups of GROUP_M row tiles so that
  consecutive programs share W tiles in L2.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

UNIT = 8  # fp16 elements per 16 bytes
SLOT = 64  # columns per softmax partial


def _configs():
    # 256x128 (8 warps) and 128x128 (4 warps) spill in the GELU + row-statistics epilogue on sm_90:
    # left out.
    shapes = [(128, 256, 64, 3, 8), (128, 128, 64, 4, 8), (64, 256, 64, 4, 8), (64, 128, 64, 4, 4),
              (128, 64, 64, 4, 4)]
    return [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8}, num_stages=s, num_warps=w)
            for m, n, k, s, w in shapes]


@triton.jit
def _gelu(v):
    """v * Phi(v) = v / 2 * (1 + erf(v / sqrt 2)), with 1 + erf taken as erfc(|z|) or 2 - erfc(|z|)
    from the Abramowitz-Stegun 7.1.26 form (absolute error under 1.5e-7): one exp and one division,
    and no cancellation in the negative tail."""
    z = tl.abs(v) * 0.7071067811865476
    t = 1.0 / (1.0 + 0.3275911 * z)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    erfc = poly * tl.exp(-z * z)
    return 0.5 * v * tl.where(v >= 0, 2.0 - erfc, erfc)


@triton.autotune(configs=_configs(), key=["M", "N", "k_units"])
@triton.jit
def linear_gelu_stats_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr, max_ptr, sum_ptr,
    M, N, k_units, xm_units, wn_units, stride_ym, slots,
    UNIT: tl.constexpr, SLOT: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    """y = fp16(gelu(x @ W.T + b)); per row, max and sum of exp(y - max) over this tile's columns,
    stored at slot pid_n * BLOCK_N / SLOT of (slots, M) arrays, the tile's other slots (-inf, 0)."""
    LOG2E: tl.constexpr = 1.4426950408889634
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
    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :]
    w_ptrs = w_ptr + offs_k[:, None] + offs_n[None, :] * stride_wn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(tl.cdiv(K, BLOCK_K)):
        left = K - k * BLOCK_K
        x = tl.load(x_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < left), other=0.0)
        w = tl.load(w_ptrs, mask=(offs_k[:, None] < left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(x, w, acc)
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K

    m_mask = offs_m < M
    n_mask = offs_n < N
    v = acc + tl.load(b_ptr + offs_n, mask=n_mask, other=0.0).to(tl.float32)[None, :]
    g = _gelu(v).to(y_ptr.dtype.element_ty)
    tl.store(y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :], g, mask=m_mask[:, None] & n_mask[None, :])

    gf = tl.where(n_mask[None, :], g.to(tl.float32), float("-inf"))
    row_max = tl.max(gf, axis=1)
    row_sum = tl.sum(tl.exp2((gf - row_max[:, None]) * LOG2E), axis=1)
    PER_TILE: tl.constexpr = BLOCK_N // SLOT
    local = tl.arange(0, PER_TILE)
    slot = pid_n * PER_TILE + local
    first = (local == 0)[None, :]
    at = slot[None, :] * M + offs_m[:, None]
    mask = m_mask[:, None] & (slot[None, :] < slots)
    tl.store(max_ptr + at, tl.where(first, row_max[:, None], float("-inf")), mask=mask)
    tl.store(sum_ptr + at, tl.where(first, row_sum[:, None], 0.0), mask=mask)


@triton.jit
def softmax_merge_kernel(max_ptr, sum_ptr, row_max_ptr, row_inv_ptr, M, slots,
                         BLOCK_R: tl.constexpr, BLOCK_S: tl.constexpr):
    """Per row, the max and 1 / sum of exp(y - max) over all columns, from the slot partials."""
    LOG2E: tl.constexpr = 1.4426950408889634
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    row_mask = rows < M
    best = tl.full((BLOCK_R,), float("-inf"), tl.float32)
    total = tl.zeros((BLOCK_R,), dtype=tl.float32)
    for start in range(0, slots, BLOCK_S):
        s = start + tl.arange(0, BLOCK_S)
        mask = (s[:, None] < slots) & row_mask[None, :]
        at = s[:, None] * M + rows[None, :]
        m = tl.load(max_ptr + at, mask=mask, other=float("-inf"))
        e = tl.load(sum_ptr + at, mask=mask, other=0.0)
        new_best = tl.maximum(best, tl.max(m, axis=0))
        safe = tl.where(new_best == float("-inf"), 0.0, new_best)
        total = total * tl.exp2((best - safe) * LOG2E) + tl.sum(e * tl.exp2((m - safe[None, :]) * LOG2E), axis=0)
        best = new_best
    total = tl.where(row_mask, total, 1.0)  # rows past M: keep the division finite
    tl.store(row_max_ptr + rows, best, mask=row_mask)
    tl.store(row_inv_ptr + rows, 1.0 / total, mask=row_mask)


@triton.jit
def softmax_normalize_kernel(y_ptr, row_max_ptr, row_inv_ptr, total, N, BLOCK: tl.constexpr):
    """y = exp(y - max) / sum in place over the flat M * N output; every block but the last is
    unmasked, so its accesses stay 16 bytes wide whatever M * N is."""
    LOG2E: tl.constexpr = 1.4426950408889634
    start = tl.program_id(0) * BLOCK
    offs = start + tl.arange(0, BLOCK)
    rows = offs // N
    if start + BLOCK <= total:
        g = tl.load(y_ptr + offs).to(tl.float32)
        y = tl.exp2((g - tl.load(row_max_ptr + rows)) * LOG2E) * tl.load(row_inv_ptr + rows)
        tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty))
    else:
        mask = offs < total
        g = tl.load(y_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        row_max = tl.load(row_max_ptr + rows, mask=mask, other=0.0)
        row_inv = tl.load(row_inv_ptr + rows, mask=mask, other=0.0)
        y = tl.exp2((g - row_max) * LOG2E) * row_inv
        tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def pad_rows_kernel(src_ptr, dst_ptr, R, K, stride_src, padded_units,
                    BLOCK_R: tl.constexpr, BLOCK_K: tl.constexpr, UNIT: tl.constexpr):
    padded = padded_units * UNIT
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.program_id(1) * BLOCK_K + tl.arange(0, BLOCK_K)
    row_mask = rows[:, None] < R
    value = tl.load(src_ptr + rows.to(tl.int64)[:, None] * stride_src + cols[None, :],
                    mask=row_mask & (cols[None, :] < K), other=0.0)
    tl.store(dst_ptr + rows.to(tl.int64)[:, None] * padded + cols[None, :], value,
             mask=row_mask & (cols[None, :] < padded))


def _aligned_rows(t):
    """``t`` itself when its rows start on 16-byte boundaries and hold whole 16-byte units, else a
    copy whose rows are zero-padded to the next multiple of UNIT elements."""
    rows, cols = t.shape
    if cols % UNIT == 0 and t.stride(0) % UNIT == 0 and t.stride(1) == 1 and t.data_ptr() % 16 == 0:
        return t
    padded = triton.cdiv(cols, UNIT) * UNIT
    out = torch.empty((rows, padded), device=t.device, dtype=t.dtype)
    pad_rows_kernel[(triton.cdiv(rows, 16), triton.cdiv(padded, 256))](
        t, out, rows, cols, t.stride(0), padded // UNIT, BLOCK_R=16, BLOCK_K=256, UNIT=UNIT, num_warps=4)
    return out


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, dtype=torch.float16)

    def forward(self, x):
        M = x.shape[0]
        w, b = self.linear.weight, self.linear.bias
        N = w.shape[0]
        x, w = _aligned_rows(x), _aligned_rows(w)
        K = x.shape[1]  # padded with zeros where needed, which add nothing to the product

        y = torch.empty((M, N), device=x.device, dtype=x.dtype)
        slots = triton.cdiv(N, SLOT)
        part_max = torch.empty((slots, M), device=x.device, dtype=torch.float32)
        part_sum = torch.empty((slots, M), device=x.device, dtype=torch.float32)

        def grid(meta):
            return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)

        linear_gelu_stats_kernel[grid](
            x, w, b, y, part_max, part_sum, M, N, K // UNIT, x.stride(0) // UNIT, w.stride(0) // UNIT,
            y.stride(0), slots, UNIT=UNIT, SLOT=SLOT)

        row_max = torch.empty((M,), device=x.device, dtype=torch.float32)
        row_inv = torch.empty((M,), device=x.device, dtype=torch.float32)
        softmax_merge_kernel[(triton.cdiv(M, 128),)](part_max, part_sum, row_max, row_inv, M, slots,
                                                     BLOCK_R=128, BLOCK_S=16, num_warps=4)
        total = M * N
        softmax_normalize_kernel[(triton.cdiv(total, 4096),)](y, row_max, row_inv, total, N,
                                                              BLOCK=4096, num_warps=8)
        return y
