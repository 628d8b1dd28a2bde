"""Linear + sigmoid + row sum without the (batch, hidden) matrix, W streamed through TMA: each GEMM
tile applies the bias and the sigmoid to its fp32 accumulator and reduces its columns to one
partial sum per row; a second kernel adds up a row's partial sums, now over many programs.

The best (round 2) is memory-bound on every case, as these small batches against wide layers must
be (the GEMM streams W: 537 MB at 16384 x 16384), and reaches 71-75% of the roofline where eager's
cuBLAS plus two passes is 1.14-1.21x faster on four cases (0.152 vs 0.177 ms on the first). Three
cases are unexplained; rung 2's split of the 16000 x 16001 case puts 90% of it in the GEMM at 75%
of its own floor (memory-bound) and 10% (18 us) in rowsum_partials_kernel, one program looping
over 251 slots for all 100 rows. The GEMM's loop computes per-thread addresses and two masks for
every operand tile of every K step, which a kernel that must keep DRAM busy pays for in issue
slots and in the depth of loads it can keep in flight. What changed:
- x [M, K] and W [N, K] come through TMA descriptors in [BLOCK, BLOCK_K] boxes as they lie (W's
  box transposed in shared memory for the dot): hardware zero fill past M, N (16001) and K, no
  masks or pointers in the loop, the copies issued by one thread; configs with BLOCK_K = 128 or
  4-5 stages keep up to 128 KB of W in flight per program; the cp.async configs stay beside them so the
  autotuner keeps whichever is faster, and they alone run where a row is not 16-byte aligned;
- the partial sums are added by programs of 16 rows x 256 slots (one pass over a 16384-wide
  layer's slots, 7 programs for 100 rows instead of one), in the same fixed order.
Kept: the epilogue (bias and sigmoid on the fp32 accumulator, one fp32 partial sum per row and
64-column slot, zeros in a tile's other slots), GROUP_M order so the programs sharing a W slice run
together, no split-K (the sigmoid needs the whole dot product).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

UNIT = 8  # fp16 elements per 16 bytes
ROWSUM_ROWS = 16
ROWSUM_SLOTS = 256


def _set_blocks(nargs):
    """The descriptors' block shapes follow the config (TMA boxes of BLOCK_M x BLOCK_K of x and
    BLOCK_N x BLOCK_K of W); a launch without descriptors (rows not 16-byte aligned) has none to set."""
    if nargs["x_desc"] is not None:
        nargs["x_desc"].block_shape = [nargs["BLOCK_M"], nargs["BLOCK_K"]]
        nargs["w_desc"].block_shape = [nargs["BLOCK_N"], nargs["BLOCK_K"]]


def _configs():
    # (BLOCK_M, BLOCK_N, BLOCK_K, stages, warps, TMA)
    shapes = [(128, 128, 128, 3, 8, True), (128, 64, 128, 4, 4, True), (64, 128, 128, 4, 4, True),
              (128, 128, 64, 5, 8, True), (128, 64, 64, 5, 4, True), (256, 128, 64, 3, 8, True),
              (128, 64, 64, 4, 4, False), (128, 128, 64, 4, 4, False), (128, 128, 64, 4, 8, False),
              (64, 128, 64, 4, 4, False), (256, 128, 64, 3, 8, False), (128, 256, 64, 3, 8, False)]
    return [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8, "TMA": tma}, num_stages=s,
                          num_warps=w, pre_hook=_set_blocks)
            for m, n, k, s, w, tma in shapes]


def _usable(configs, named_args, **kwargs):
    """The TMA configs only where descriptors were made (every row 16-byte aligned)."""
    return [c for c in configs if named_args["x_desc"] is not None or not c.kwargs["TMA"]]


@triton.autotune(configs=_configs(), key=["M", "N", "K"], prune_configs_by={"early_config_prune": _usable})
@triton.jit
def linear_sigmoid_rowsum_kernel(
    x_desc, w_desc, x_ptr, w_ptr, b_ptr, part_ptr,
    M, N, K,
    stride_xm, stride_xk, stride_wn, stride_wk, stride_pt, n_slots,
    SLOT: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    TMA: tl.constexpr,
):
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
    m_mask = offs_m < M
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
        x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :] * stride_xk
        w_ptrs = w_ptr + offs_k[:, None] * stride_wk + offs_n[None, :] * stride_wn
        for k in range(tl.cdiv(K, BLOCK_K)):
            left = K - k * BLOCK_K
            x = tl.load(x_ptrs, mask=m_mask[:, None] & (offs_k[None, :] < left), other=0.0)
            w = tl.load(w_ptrs, mask=(offs_k[:, None] < left) & n_mask[None, :], other=0.0)
            acc = tl.dot(x, w, acc)
            x_ptrs += BLOCK_K * stride_xk
            w_ptrs += BLOCK_K * stride_wk

    bias = tl.load(b_ptr + offs_n, mask=n_mask, other=0.0).to(tl.float32)
    s = tl.where(n_mask[None, :], tl.sigmoid(acc + bias[None, :]), 0.0)
    # One slot per SLOT columns whatever BLOCK_N the autotuner picked: the tile's sum goes to its
    # first slot, zeros to the others, so the second kernel needs no knowledge of the config.
    SLOTS: tl.constexpr = BLOCK_N // SLOT
    slot0 = pid_n * SLOTS
    tl.store(part_ptr + slot0 * stride_pt + offs_m, tl.sum(s, axis=1), mask=m_mask)
    for j in tl.static_range(1, SLOTS):
        tl.store(part_ptr + (slot0 + j) * stride_pt + offs_m, tl.zeros((BLOCK_M,), dtype=tl.float32),
                 mask=m_mask & (slot0 + j < n_slots))


@triton.jit
def rowsum_partials_kernel(part_ptr, y_ptr, M, n_slots, stride_pt, stride_ym,
                           BLOCK_R: tl.constexpr, BLOCK_T: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    r_mask = rows < M
    offs_t = tl.arange(0, BLOCK_T)
    acc = tl.zeros((BLOCK_T, BLOCK_R), dtype=tl.float32)
    for t in range(0, n_slots, BLOCK_T):
        slots = t + offs_t
        acc += tl.load(part_ptr + slots[:, None] * stride_pt + rows[None, :],
                       mask=(slots[:, None] < n_slots) & r_mask[None, :], other=0.0)
    tl.store(y_ptr + rows * stride_ym, tl.sum(acc, axis=0).to(y_ptr.dtype.element_ty), mask=r_mask)


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.linear = nn.Linear(input_size, hidden_size, dtype=torch.float16)

    def forward(self, x):
        M, K = x.shape
        w, b = self.linear.weight, self.linear.bias
        N = w.shape[0]
        slot = 64  # the narrowest BLOCK_N in the autotune space
        n_slots = triton.cdiv(N, slot)
        part = torch.empty((n_slots, M), device=x.device, dtype=torch.float32)

        def grid(meta):
            return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)

        x_desc = w_desc = None
        if all(t.stride(1) == 1 and t.stride(0) % UNIT == 0 and t.data_ptr() % 16 == 0 for t in (x, w)):
            # block shapes are set per config by _set_blocks
            x_desc = TensorDescriptor(x, [M, K], [x.stride(0), 1], [64, 64])
            w_desc = TensorDescriptor(w, [N, K], [w.stride(0), 1], [64, 64])

        linear_sigmoid_rowsum_kernel[grid](
            x_desc, w_desc, x, w, b, part, M, N, K,
            x.stride(0), x.stride(1), w.stride(0), w.stride(1), part.stride(0), n_slots, SLOT=slot,
        )
        y = torch.empty((M, 1), device=x.device, dtype=x.dtype)
        rowsum_partials_kernel[(triton.cdiv(M, ROWSUM_ROWS),)](
            part, y, M, n_slots, part.stride(0), y.stride(0), BLOCK_R=ROWSUM_ROWS, BLOCK_T=ROWSUM_SLOTS,
        )
        return y
