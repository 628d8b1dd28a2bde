"""Linear + scale + training-mode BatchNorm, with the statistics gathered in the GEMM's epilogue.

The initial version spent most of its time outside the GEMM: its BatchNorm gave each program 64
features and walked the whole batch three times (N/64 programs, 128 for N=8192: most SMs idle), and
its GEMM used 64x64x32 tiles (too small for wgmma to keep the tensor cores busy).

Here the GEMM (autotuned Hopper-sized tiles, grouped tile order for L2 reuse) stores h and, from its
fp32 accumulator, each tile's per-feature mean and M2 (squared deviations from the tile's own mean,
so no E[h^2]-E[h]^2 cancellation). The second kernel combines a feature's tile statistics (Chan's
formula) and normalises a 2-D block of h: h is read once, y written once, with as many programs as
tiles.

Round 2: that version reached 73% of its floor on the power-of-two cases but 11% on the 1001 x 7000
-> 5000 and 3000-cube cases, where the brief's split puts 98% of the forward in the GEMM at 11% of
its own floor and the IR shows why: K (7000, 3000) and the row strides are not multiples of 16, so
Triton proves no alignment, the operand loads are single fp16 accesses and the dot loop is not
pipelined (nv.scalar-access, nv.unpipelined-loop). K, N and every row stride now reach both kernels
in units of the largest of 8, 4, 2, 1 elements dividing them (multiplied back inside), so those rows
are copied 16 bytes at a time; K steps are unmasked where BLOCK_K divides K, and the GEMM clamps
edge rows and columns onto valid ones instead of masking its loads (the stores mask them).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


def _configs():
    shapes = [(128, 256, 64, 3, 8), (128, 128, 64, 4, 4), (128, 128, 64, 4, 8), (64, 128, 64, 4, 4),
              (128, 64, 64, 4, 4)]
    return [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8}, num_stages=s, num_warps=w)
            for m, n, k, s, w in shapes]


@triton.autotune(configs=_configs(), key=["M", "n_units", "k_units", "UNIT", "Y_UNIT"])
@triton.heuristics({"EVEN_K": lambda a: (a["k_units"] * a["UNIT"]) % a["BLOCK_K"] == 0})
@triton.jit
def linear_scale_stats_kernel(
    x_ptr, w_ptr, b_ptr, s_ptr, y_ptr, mean_ptr, m2_ptr,
    M, n_units, k_units, xm_units, wn_units, ym_units,
    UNIT: tl.constexpr, Y_UNIT: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    STATS_ROWS: tl.constexpr, EVEN_K: tl.constexpr,
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
    rows = tl.minimum(offs_m, M - 1)  # edge rows and columns read the last valid one (masked at the store)
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
    row_mask = offs_m < M
    bias = tl.load(b_ptr + offs_n, mask=n_mask, other=0.0).to(tl.float32)
    scale = tl.load(s_ptr + offs_n, mask=n_mask, other=0.0).to(tl.float32)
    h = (acc + bias[None, :]) * scale[None, :]
    mask = row_mask[:, None] & n_mask[None, :]
    tl.store(y_ptr + offs_m.to(tl.int64)[:, None] * stride_ym + offs_n[None, :], h.to(y_ptr.dtype.element_ty),
             mask=mask)

    # Statistics per 64-row slice of the tile, so that their layout does not depend on the config
    # the tuner chose: slice s holds rows [64 s, 64 s + 64).
    SLICES: tl.constexpr = BLOCK_M // STATS_ROWS
    slices = pid_m * SLICES + tl.arange(0, SLICES)
    counts = tl.minimum(tl.maximum(M - slices * STATS_ROWS, 0), STATS_ROWS).to(tl.float32)
    value = tl.reshape(tl.where(mask, h, 0.0), (SLICES, STATS_ROWS, BLOCK_N))
    inside = tl.reshape(mask, (SLICES, STATS_ROWS, BLOCK_N))
    mean = tl.sum(value, axis=1) / tl.maximum(counts, 1.0)[:, None]
    diff = tl.where(inside, value - mean[:, None, :], 0.0)
    stats = slices[:, None] * N + offs_n[None, :]
    kept = (counts > 0)[:, None] & n_mask[None, :]
    tl.store(mean_ptr + stats, mean, mask=kept)
    tl.store(m2_ptr + stats, tl.sum(diff * diff, axis=1), mask=kept)


@triton.jit
def batch_norm_apply_kernel(
    h_ptr, gamma_ptr, beta_ptr, y_ptr, mean_ptr, m2_ptr,
    M, n_units, row_units, n_tiles, eps,
    Y_UNIT: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, TILE_STEP: tl.constexpr,
    STATS_ROWS: tl.constexpr,
):
    N = n_units * Y_UNIT
    stride_row = row_units * Y_UNIT
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < N
    weighted = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for first in range(0, n_tiles, TILE_STEP):
        tiles = first + tl.arange(0, TILE_STEP)
        both = (tiles < n_tiles)[:, None] & col_mask[None, :]
        counts = tl.minimum(tl.maximum(M - tiles * STATS_ROWS, 0), STATS_ROWS).to(tl.float32)
        means = tl.load(mean_ptr + tiles[:, None] * N + cols[None, :], mask=both, other=0.0)
        weighted += tl.sum(counts[:, None] * means, axis=0)
    mean = weighted / M
    m2 = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for first in range(0, n_tiles, TILE_STEP):
        tiles = first + tl.arange(0, TILE_STEP)
        both = (tiles < n_tiles)[:, None] & col_mask[None, :]
        counts = tl.minimum(tl.maximum(M - tiles * STATS_ROWS, 0), STATS_ROWS).to(tl.float32)
        means = tl.load(mean_ptr + tiles[:, None] * N + cols[None, :], mask=both, other=0.0)
        m2s = tl.load(m2_ptr + tiles[:, None] * N + cols[None, :], mask=both, other=0.0)
        shift = tl.where(both, means - mean[None, :], 0.0)
        m2 += tl.sum(m2s + counts[:, None] * shift * shift, axis=0)
    rstd = 1.0 / tl.sqrt(m2 / M + eps)
    gamma = tl.load(gamma_ptr + cols, mask=col_mask, other=0.0).to(tl.float32)
    beta = tl.load(beta_ptr + cols, mask=col_mask, other=0.0).to(tl.float32)
    a = rstd * gamma
    c = beta - mean * a

    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    mask = (rows[:, None] < M) & col_mask[None, :]
    offsets = rows.to(tl.int64)[:, None] * stride_row + cols[None, :]
    h = tl.load(h_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + offsets, (h * a[None, :] + c[None, :]).to(y_ptr.dtype.element_ty), mask=mask)


STATS_ROWS = 64  # rows per statistics slice: every config's BLOCK_M is a multiple of it


def _unit(*tensors):
    """Largest of 8, 4, 2, 1 elements that divides every row length, row stride and base offset (in
    elements), so that the kernels can see the alignment of their rows."""
    for unit in (8, 4, 2, 1):
        if all(t.shape[1] % unit == 0 and t.stride(0) % unit == 0
               and t.data_ptr() % (unit * t.element_size()) == 0 for t in tensors):
            return unit
    return 1


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale_shape, eps=1e-5, momentum=0.1):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, dtype=torch.float16)
        self.scale = nn.Parameter(torch.randn(scale_shape, dtype=torch.float16))
        self.bn = nn.BatchNorm1d(out_features, eps=eps, momentum=momentum, dtype=torch.float16)
        with torch.no_grad():
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        w, b = self.gemm.weight, self.gemm.bias
        if x.stride(1) != 1:
            x = x.contiguous()
        if w.stride(1) != 1:
            w = w.contiguous()
        M, K = x.shape
        N = w.shape[0]
        max_tiles = triton.cdiv(M, STATS_ROWS)
        h = torch.empty((M, N), device=x.device, dtype=x.dtype)
        means = torch.empty((max_tiles, N), device=x.device, dtype=torch.float32)
        m2s = torch.empty_like(means)

        def grid(meta):
            return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)

        unit, y_unit = _unit(x, w), _unit(h)
        linear_scale_stats_kernel[grid](
            x, w, b, self.scale, h, means, m2s, M, N // y_unit, K // unit,
            x.stride(0) // unit, w.stride(0) // unit, h.stride(0) // y_unit,
            UNIT=unit, Y_UNIT=y_unit, STATS_ROWS=STATS_ROWS,
        )
        y = torch.empty_like(h)
        block_n = 64
        batch_norm_apply_kernel[(triton.cdiv(M, 64), triton.cdiv(N, block_n))](
            h, self.bn.weight, self.bn.bias, y, means, m2s, M, N // y_unit, h.stride(0) // y_unit, max_tiles,
            self.bn.eps, Y_UNIT=y_unit, BLOCK_M=64, BLOCK_N=block_n, TILE_STEP=16, STATS_ROWS=STATS_ROWS,
            num_warps=4,
        )
        return y
