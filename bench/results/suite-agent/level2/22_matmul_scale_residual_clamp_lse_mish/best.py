"""Linear + scale + residual doubling + clamp + row logsumexp in the GEMM's epilogue, its operands now
through TMA descriptors: each tile reduces its clamped values to a per-row (max, sum of
exponentials) pair, and a small kernel merges the pairs of a row into its logsumexp and y * mish(y).
The M x N intermediate is never written.

The best (the agent's round 2, 2.357x over the initial version after the rules' round 1) runs
three cases at 75-86% of the roofline and two behind: 3000 x 3000 -> 5000 at 49% (torch.compile
67%) and 777 x 8192 -> 8192 at 57%, where eager's cuBLAS plus three passes is ahead (0.218 vs
0.243 ms). Its findings on those cases: nv.scalar-access and the masked, clamped per-thread operand
copies in the K loop (rows and columns past the edge re-read the last valid one; 3000 = 23 x 128 +
56 and 777 = 6 x 128 + 9 leave edge tiles on every wave), and nv.tile-misfit (the big tiles'
partial last waves). What changed:
- x and W come through TMA descriptors in [BLOCK, BLOCK_K] boxes as they lie (W's box transposed in
  shared memory for the dot): rows past M and N and K steps past K arrive as zeros from the
  hardware, so the loop has no masks, no clamps and no per-thread pointers; the cp.async configs
  stay beside the TMA ones so the autotuner keeps whichever is faster per size;
- x and W are copied into rows zero-padded to a multiple of 8 elements only where their rows are
  not 16-byte aligned (none of these cases), as TMA requires.
Kept: the fused epilogue (bias, the exact 2 s multiply, the clamp, the tile's row max and sum of
exponentials over its valid columns), the online merge of the pairs with one-exponential mish,
autotuned Hopper tiles in GROUP_M-grouped order. The partial last waves are left as they are:
on these shapes their tails are too large to split along K (3000 x 5000 at 128x256: 480 tiles, 84
past the third wave; 777 x 8192: 224, 92 past the first).

The first round's reasoning, still true of the epilogue: the initial version wrote
h = clamp(2 s (x W^T + b)) as an M x N fp16 matrix and read it twice more in a one-program-per-row
logsumexp kernel (nv.unfused-epilogue, nv.redundant-global-traffic); here each tile stores BLOCK_M
(max, sum) pairs, and mish uses tanh(softplus(y)) = n / (n + 2), n = e^y (e^y + 2): one
exponential, no overflow (e^y is taken at min(y, 20), where the ratio is 1 in fp32).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

UNIT = 8  # fp16 elements per 16 bytes
COMBINE_ROWS = 64
COMBINE_TILES = 32


def _set_blocks(nargs):
    """The descriptors' block shapes follow the config (TMA boxes of BLOCK_M x BLOCK_K of x and
    BLOCK_N x BLOCK_K of W)."""
    nargs["x_desc"].block_shape = [nargs["BLOCK_M"], nargs["BLOCK_K"]]
    nargs["w_desc"].block_shape = [nargs["BLOCK_N"], nargs["BLOCK_K"]]


def _configs():
    # (BLOCK_M, BLOCK_N, BLOCK_K, stages, warps, TMA)
    shapes = [(128, 256, 64, 3, 8, True), (256, 128, 64, 3, 8, True), (128, 128, 64, 4, 8, True),
              (128, 128, 64, 4, 4, True), (64, 256, 64, 4, 8, True),
              (128, 256, 64, 3, 8, False), (128, 128, 64, 4, 8, False), (128, 64, 64, 4, 4, False)]
    return [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8, "TMA": tma}, num_stages=s,
                          num_warps=w, pre_hook=_set_blocks)
            for m, n, k, s, w, tma in shapes]


@triton.autotune(configs=_configs(), key=["M", "N", "k_units"])
@triton.heuristics({"EVEN_K": lambda a: (a["k_units"] * UNIT) % a["BLOCK_K"] == 0})
@triton.jit
def linear_clamp_lse_partial_kernel(
    x_desc, w_desc, x_ptr, w_ptr, b_ptr, pmax_ptr, psum_ptr,
    M, N, k_units, xm_units, wn_units,
    scale2, clamp_min, clamp_max,
    UNIT: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    TMA: tl.constexpr, EVEN_K: tl.constexpr,
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
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    if TMA:
        # TMA boxes: rows of x past M, rows of W past N and K steps past K arrive as zeros
        for k in range(tl.cdiv(K, BLOCK_K)):
            x = x_desc.load([pid_m * BLOCK_M, k * BLOCK_K])
            w = w_desc.load([pid_n * BLOCK_N, k * BLOCK_K])
            acc = tl.dot(x, w.T, acc)
    else:
        offs_k = tl.arange(0, BLOCK_K)
        # rows and columns past the edge read the last valid one (their results are masked below)
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


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_size, scale_factor, clamp_min, clamp_max):
        super().__init__()
        self.matmul = nn.Linear(input_size, hidden_size, dtype=torch.float16)
        self.scale_factor = scale_factor
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max

    def forward(self, x):
        w, b = self.matmul.weight, self.matmul.bias
        M, N = x.shape[0], w.shape[0]
        x, w = _aligned_rows(x), _aligned_rows(w)
        K = x.shape[1]
        # block shapes are set per config by _set_blocks
        x_desc = TensorDescriptor(x, [M, K], [x.stride(0), 1], [64, 64])
        w_desc = TensorDescriptor(w, [N, K], [w.stride(0), 1], [64, 64])
        max_tiles = triton.cdiv(N, 64)  # the smallest BLOCK_N
        pmax = torch.empty((max_tiles, M), device=x.device, dtype=torch.float32)
        psum = torch.empty((max_tiles, M), device=x.device, dtype=torch.float32)

        chosen = {}

        def grid(meta):
            # called with the config of each launch, the autotuner's choice last
            chosen["tiles_n"] = triton.cdiv(N, meta["BLOCK_N"])
            return (triton.cdiv(M, meta["BLOCK_M"]) * chosen["tiles_n"],)

        linear_clamp_lse_partial_kernel[grid](
            x_desc, w_desc, x, w, b, pmax, psum, M, N, K // UNIT, x.stride(0) // UNIT, w.stride(0) // UNIT,
            2.0 * self.scale_factor, self.clamp_min, self.clamp_max, UNIT=UNIT,
        )
        y = torch.empty((M, 1), device=x.device, dtype=x.dtype)
        lse_mish_combine_kernel[(triton.cdiv(M, COMBINE_ROWS),)](
            pmax, psum, y, M, chosen["tiles_n"], BLOCK_R=COMBINE_ROWS, BLOCK_T=COMBINE_TILES, num_warps=4,
        )
        return y
