"""Linear + scale + residual doubling + clamp + row logsumexp in the GEMM's epilogue: each tile
reduces its clamped values to a per-row (max, sum of exponentials) pair, and a small kernel merges
the pairs of a row into its logsumexp and y * mish(y). The M x N intermediate is never written.

The initial version (and the configuration-searched best) wrote h = clamp(2 s (x W^T + b)) as an
M x N fp16 matrix and read it twice more in a one-program-per-row logsumexp kernel (a max pass and a
sum pass: nv.unfused-epilogue, nv.redundant-global-traffic), for an output of one value per row.
Here, on the GEMM's fp32 accumulator, the epilogue applies the bias, the scale and the residual
x + x as one multiply by 2 s (exact: a power-of-two factor), the clamp, then the tile's row maximum
and the row sum of exp(v - max) over its valid columns; it stores BLOCK_M such pairs per tile
(cdiv(N, BLOCK_N) x M fp32 pairs: 0.25-0.5 MB for the first case, where h was 16 MB written and
32 MB read back). The combine kernel takes 64 rows a program and merges a row's pairs online
(rescaling the running sum when the maximum grows), then applies mish with
tanh(softplus(y)) = n / (n + 2), n = e^y (e^y + 2): one exponential, no overflow (e^y is taken at
min(y, 20), where the ratio is 1 in fp32).

The GEMM itself was the other cost. On the 3000-wide case (rows of 6000 bytes, not a multiple of
16 elements, so Triton could not prove alignment) every operand load was a lone fp16 ld.global and
the dot loop was not pipelined (nv.scalar-access, nv.unpipelined-loop): 13% of roofline. The K
extent and the row strides now reach the kernel in units of UNIT elements (8 where the rows hold
whole 16-byte units, as on every case here; fewer otherwise), multiplied back inside, so 16-byte
cp.async copies are provable. Tiles are Hopper-sized and autotuned (wgmma, 3-4 stages, 4-8 warps;
nv.hardcoded-config), in groups of GROUP_M row tiles so consecutive programs share W tiles in L2
(nv.gemm-no-grouped-order), with unmasked K steps where BLOCK_K divides K and out-of-range rows and
columns clamped to the edge instead of masked in the loop (only the epilogue masks them).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

COMBINE_ROWS = 64
COMBINE_TILES = 32


def _configs():
    shapes = [(128, 256, 64, 3, 8), (256, 128, 64, 3, 8), (128, 128, 64, 4, 8), (128, 128, 64, 4, 4),
              (64, 256, 64, 4, 8), (128, 64, 64, 4, 4), (64, 128, 64, 4, 4)]
    return [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8}, num_stages=s, num_warps=w)
            for m, n, k, s, w in shapes]


@triton.autotune(configs=_configs(), key=["M", "N", "k_units", "UNIT"])
@triton.heuristics({"EVEN_K": lambda a: (a["k_units"] * a["UNIT"]) % a["BLOCK_K"] == 0})
@triton.jit
def linear_clamp_lse_partial_kernel(
    x_ptr, w_ptr, b_ptr, pmax_ptr, psum_ptr,
    M, N, k_units, xm_units, wn_units,
    scale2, clamp_min, clamp_max,
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
    # rows and columns past the edge read the last valid one (their results are masked below)
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
    v = (acc + bias[None, :]) * scale2  # (h * s) + (h * s) == h * 2s exactly
    v = tl.minimum(tl.maximum(v, clamp_min), clamp_max)
    v = tl.where(n_mask[None, :], v, float("-inf"))
    tile_max = tl.max(v, axis=1)
    tile_sum = tl.sum(tl.exp(v - tile_max[:, None]), axis=1)
    m_mask = offs_m < M
    tl.store(pmax_ptr + pid_n * M + offs_m, tile_max, mask=m_mask)
    tl.store(psum_ptr + pid_n * M + offs_m, tile_sum, mask=m_mask)


@triton.jit
def lse_mish_combine_kernel(pmax_ptr, psum_ptr, y_ptr, M, n_tiles,
                            BLOCK_R: tl.constexpr, BLOCK_T: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    row_mask = rows < M
    run_max = tl.full((BLOCK_R,), float("-inf"), dtype=tl.float32)
    run_sum = tl.zeros((BLOCK_R,), dtype=tl.float32)
    for first in range(0, n_tiles, BLOCK_T):
        tiles = first + tl.arange(0, BLOCK_T)
        both = (tiles < n_tiles)[:, None] & row_mask[None, :]
        maxes = tl.load(pmax_ptr + tiles[:, None] * M + rows[None, :], mask=both, other=float("-inf"))
        sums = tl.load(psum_ptr + tiles[:, None] * M + rows[None, :], mask=both, other=0.0)
        new_max = tl.maximum(run_max, tl.max(maxes, axis=0))
        new_max = tl.where(new_max == float("-inf"), 0.0, new_max)  # rows past M: keep exp finite
        run_sum = run_sum * tl.exp(run_max - new_max) + tl.sum(sums * tl.exp(maxes - new_max[None, :]), axis=0)
        run_max = new_max
    y = run_max + tl.log(tl.where(row_mask, run_sum, 1.0))
    # mish(y) = y * tanh(softplus(y)) and tanh(log(1 + t)) = n / (n + 2) with t = e^y, n = t (t + 2)
    t = tl.exp(tl.minimum(y, 20.0))
    n = t * (t + 2.0)
    out = y * (y * (n / (n + 2.0)))
    tl.store(y_ptr + rows, out.to(y_ptr.dtype.element_ty), mask=row_mask)


def _unit(*tensors):
    """Largest of 8, 4, 2, 1 elements that divides every row length, row stride and base offset (in
    elements), so that the kernel can see the alignment of its rows."""
    for unit in (8, 4, 2, 1):
        if all(t.stride(1) == 1 and t.shape[1] % unit == 0 and t.stride(0) % unit == 0
               and t.data_ptr() % (unit * t.element_size()) == 0 for t in tensors):
            return unit
    return 1


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_size, scale_factor, clamp_min, clamp_max):
        super().__init__()
        self.matmul = nn.Linear(input_size, hidden_size, dtype=torch.float16)
        self.scale_factor = scale_factor
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max

    def forward(self, x):
        w, b = self.matmul.weight, self.matmul.bias
        M, K = x.shape
        N = w.shape[0]
        unit = _unit(x, w)
        max_tiles = triton.cdiv(N, 64)  # the smallest BLOCK_N
        pmax = torch.empty((max_tiles, M), device=x.device, dtype=torch.float32)
        psum = torch.empty((max_tiles, M), device=x.device, dtype=torch.float32)

        chosen = {}

        def grid(meta):
            # called with the config of each launch, the autotuner's choice last
            chosen["tiles_n"] = triton.cdiv(N, meta["BLOCK_N"])
            return (triton.cdiv(M, meta["BLOCK_M"]) * chosen["tiles_n"],)

        linear_clamp_lse_partial_kernel[grid](
            x, w, b, pmax, psum, M, N, K // unit, x.stride(0) // unit, w.stride(0) // unit,
            2.0 * self.scale_factor, self.clamp_min, self.clamp_max, UNIT=unit,
        )
        y = torch.empty((M, 1), device=x.device, dtype=x.dtype)
        lse_mish_combine_kernel[(triton.cdiv(M, COMBINE_ROWS),)](
            pmax, psum, y, M, chosen["tiles_n"], BLOCK_R=COMBINE_ROWS, BLOCK_T=COMBINE_TILES, num_warps=4,
        )
        return y
