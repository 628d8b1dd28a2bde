"""Linear + sigmoid, then linear + logsumexp with the row reduction in the second GEMM's epilogue:
the logits never reach memory.

The initial version ran both GEMMs as fixed 64x64x32 tiles in row-major program order, wrote the
second GEMM's logits as an fp32 M x N buffer (64 MB written and read back for the first case) and
reduced them with one program per row; where the hidden size is 3000 (rows of h and W2 start on
8-byte, not 16-byte, boundaries as far as Triton can tell) the second GEMM's loads were single
fp16s and its loop was not pipelined at all. Here:
- the second GEMM's epilogue adds the bias and reduces its BLOCK_N slice of each row to a partial
  (max, sum of exp(v - max)) in fp32; a small pass combines the partials of a row into
  max + log(sum) and writes the fp16 result, so the only M x N-sized traffic left is h itself
  (one fp16 write and one read: fusing both GEMMs would need a row's whole hidden vector per tile);
- partials sit in slots of 64 columns (a wider tile writes its partial into its first slot and
  neutral (-inf, 0) into the others), so the combine pass needs no knowledge of the tile the
  autotuner picked;
- K extents and row strides reach the kernels in units of 8 elements (multiplied back inside), so
  16-byte alignment of every operand row is provable and every load is a 128-bit async copy; h is
  allocated with rows padded to a multiple of 8 (its padding written as zeros by the first GEMM),
  and x, W1 and W2 are copied to zero-padded rows only where their own rows are not (never on the
  timed cases);
- both GEMMs use autotuned Hopper tiles (wgmma, 3-4 stages) taken in groups of GROUP_M row tiles,
  so that consecutive programs share weight tiles in L2.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

UNIT = 8  # fp16 elements per 16 bytes
SLOT = 64  # columns per logsumexp partial


def _configs():
    shapes = [(128, 256, 64, 3, 8), (256, 128, 64, 3, 8), (128, 128, 64, 4, 8), (128, 128, 64, 4, 4),
              (64, 256, 64, 4, 8), (64, 128, 64, 4, 4)]
    return [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8}, num_stages=s, num_warps=w)
            for m, n, k, s, w in shapes]


@triton.jit
def _gemm_tile(a_ptr, w_ptr, M, N, k_units, am_units, wn_units,
               UNIT: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
               GROUP_M: tl.constexpr):
    """fp32 tile of a @ w.T for this program (grouped order); its row and column offsets and pid_n."""
    K = k_units * UNIT
    stride_am = am_units * UNIT
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
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    w_ptrs = w_ptr + offs_k[:, None] + offs_n[None, :] * stride_wn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(tl.cdiv(K, BLOCK_K)):
        left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < left), other=0.0)
        w = tl.load(w_ptrs, mask=(offs_k[:, None] < left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, w, acc)
        a_ptrs += BLOCK_K
        w_ptrs += BLOCK_K
    return acc, offs_m, offs_n, pid_n


@triton.autotune(configs=_configs(), key=["M", "N", "k_units"])
@triton.jit
def linear_sigmoid_kernel(
    x_ptr, w_ptr, b_ptr, h_ptr,
    M, N, k_units, xm_units, wn_units, hm_units,
    UNIT: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    """h = sigmoid(x @ W.T + b) in fp16; the columns from N up to the padded row width are zeros."""
    acc, offs_m, offs_n, pid_n = _gemm_tile(x_ptr, w_ptr, M, N, k_units, xm_units, wn_units,
                                            UNIT, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M)
    n_mask = offs_n < N
    h = tl.sigmoid(acc + tl.load(b_ptr + offs_n, mask=n_mask, other=0.0).to(tl.float32)[None, :])
    h = tl.where(n_mask[None, :], h, 0.0)
    stride_hm = hm_units * UNIT
    tl.store(h_ptr + offs_m[:, None] * stride_hm + offs_n[None, :], h.to(h_ptr.dtype.element_ty),
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < stride_hm))


@triton.autotune(configs=_configs(), key=["M", "N", "k_units"])
@triton.jit
def linear_lse_partial_kernel(
    h_ptr, w_ptr, b_ptr, max_ptr, sum_ptr,
    M, N, k_units, hm_units, wn_units, slots,
    UNIT: tl.constexpr, SLOT: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    """Per row, the max and the sum of exp(v - max) of v = h @ W.T + b over this tile's columns,
    stored at slot pid_n * BLOCK_N / SLOT of (slots, M) arrays; the tile's other slots get (-inf, 0)."""
    LOG2E: tl.constexpr = 1.4426950408889634
    acc, offs_m, offs_n, pid_n = _gemm_tile(h_ptr, w_ptr, M, N, k_units, hm_units, wn_units,
                                            UNIT, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M)
    n_mask = offs_n < N
    v = acc + tl.load(b_ptr + offs_n, mask=n_mask, other=0.0).to(tl.float32)[None, :]
    v = tl.where(n_mask[None, :], v, float("-inf"))
    row_max = tl.max(v, axis=1)
    row_sum = tl.sum(tl.exp2((v - row_max[:, None]) * LOG2E), axis=1)

    PER_TILE: tl.constexpr = BLOCK_N // SLOT
    local = tl.arange(0, PER_TILE)
    slot = pid_n * PER_TILE + local
    first = (local == 0)[None, :]
    at = slot[None, :] * M + offs_m[:, None]
    mask = (offs_m[:, None] < M) & (slot[None, :] < slots)
    tl.store(max_ptr + at, tl.where(first, row_max[:, None], float("-inf")), mask=mask)
    tl.store(sum_ptr + at, tl.where(first, row_sum[:, None], 0.0), mask=mask)


@triton.jit
def lse_combine_kernel(max_ptr, sum_ptr, y_ptr, M, slots,
                       BLOCK_R: tl.constexpr, BLOCK_S: tl.constexpr):
    """y[row] = max + log(sum), merging the row's partials over all slots."""
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
    total = tl.where(row_mask, total, 1.0)  # rows past M: keep log away from zero
    tl.store(y_ptr + rows, (best + tl.log(total)).to(y_ptr.dtype.element_ty), mask=row_mask)


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
    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.linear1 = nn.Linear(input_size, hidden_size, dtype=torch.float16)
        self.linear2 = nn.Linear(hidden_size, output_size, dtype=torch.float16)

    def forward(self, x):
        M = x.shape[0]
        w1, b1 = self.linear1.weight, self.linear1.bias
        w2, b2 = self.linear2.weight, self.linear2.bias
        H, N = w1.shape[0], w2.shape[0]
        x, w1, w2 = _aligned_rows(x), _aligned_rows(w1), _aligned_rows(w2)
        K = x.shape[1]  # padded with zeros where needed, which add nothing to the product
        Hp = w2.shape[1]  # the hidden size rounded up to a multiple of UNIT

        h = torch.empty((M, Hp), device=x.device, dtype=x.dtype)

        def grid1(meta):
            return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(H, meta["BLOCK_N"]),)

        linear_sigmoid_kernel[grid1](
            x, w1, b1, h, M, H, K // UNIT, x.stride(0) // UNIT, w1.stride(0) // UNIT, Hp // UNIT, UNIT=UNIT)

        slots = triton.cdiv(N, SLOT)
        part_max = torch.empty((slots, M), device=x.device, dtype=torch.float32)
        part_sum = torch.empty((slots, M), device=x.device, dtype=torch.float32)

        def grid2(meta):
            return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)

        linear_lse_partial_kernel[grid2](
            h, w2, b2, part_max, part_sum, M, N, Hp // UNIT, Hp // UNIT, w2.stride(0) // UNIT, slots,
            UNIT=UNIT, SLOT=SLOT)

        y = torch.empty((M,), device=x.device, dtype=x.dtype)
        lse_combine_kernel[(triton.cdiv(M, 128),)](part_max, part_sum, y, M, slots,
                                                   BLOCK_R=128, BLOCK_S=16, num_warps=4)
        return y
