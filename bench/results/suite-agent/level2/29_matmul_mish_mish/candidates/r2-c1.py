"""Linear + Mish + Mish: an autotuned, pipelined Hopper GEMM with 16-byte copies on every case, the
K = 4500 case's operands copied once into rows padded to a whole number of K steps.

The first agent round (2.104x) runs four cases at 47-78% of the roofline and the fifth (M=1500,
K=4500, N=7500) at 28%: its rows are 9000 bytes apart, so the widest copy Triton can prove is 8
bytes, and the widest tiles, which need 16-byte copies to fit in registers, are pruned there. Here that case's x and W are first copied into buffers whose rows are 4544 elements long
(a multiple of BLOCK_K = 64, zeros past K = 4500; the zeros add nothing to any dot product). The
copy reads and writes 81 MB, about 40 us at the H200's bandwidth, against a GEMM of 101 GFLOP that
ran at 28% of its 128 us floor on 8-byte masked copies (the brief's IR facts for that case: 64-bit
cp.async, masked, 128x128 tiles at one program per SM): here its copies are 16-byte and its K steps
unmasked. Its output rows (7500 elements) stay unaligned, so the widest tiles stay pruned for it
(they spill with narrow stores). Shapes whose K is already a multiple of 8 are not copied.

The kernel is the first round's (grouped order, edge rows and columns clamped, both Mish on the fp32
accumulator with one exponential each, the epilogue in column halves so the widest tiles do not
spill on the aligned cases):
- mish(v) = v tanh(softplus(v)) uses tanh(log(1 + t)) = n / (n + 2), n = t (t + 2), t = e^v, with t
  taken at min(v, 20) (where the ratio is 1 in fp32) so nothing overflows.
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
    """The tiles of 4096 accumulator elements per warp (128x256 and 256x128 on 8 warps, 128x128 on 4)
    spill on sm_90 unless every copy and store is 16 bytes wide and no K step is masked: the K = 4500
    case's output rows (7500 elements) are not 16-byte aligned, so there they go even with its
    operands padded."""
    args = {**named_args, **kwargs}
    k = args["k_units"] * args["UNIT"]
    return [c for c in configs if c.kwargs["BLOCK_M"] * c.kwargs["BLOCK_N"] <= 2048 * c.num_warps
            or (args["UNIT"] == 8 and args["stride_ym"] % 8 == 0 and k % c.kwargs["BLOCK_K"] == 0)]


@triton.jit
def mish(v):
    t = tl.exp(tl.minimum(v, 20.0))
    n = t * (t + 2.0)
    return v * (n / (n + 2.0))


@triton.autotune(configs=_configs(), key=["M", "N", "k_units", "stride_ym", "UNIT"], prune_configs_by={"early_config_prune": _fit})
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


@triton.jit
def pad_k_kernel(src_ptr, dst_ptr, K, stride_src, K_PADDED: tl.constexpr, BLOCK: tl.constexpr):
    """One row of the padded copy: the source row, then zeros up to K_PADDED."""
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    value = tl.load(src_ptr + row * stride_src + cols, mask=cols < K, other=0.0)
    tl.store(dst_ptr + row * K_PADDED + cols, value, mask=cols < K_PADDED)


def _padded_k(t, k_padded):
    """`t` (rows x K, unit column stride) copied into rows of `k_padded` elements, zeros past K."""
    out = torch.empty((t.shape[0], k_padded), device=t.device, dtype=t.dtype)
    block = 1024
    pad_k_kernel[(t.shape[0], triton.cdiv(k_padded, block))](t, out, t.shape[1], t.stride(0), K_PADDED=k_padded,
                                                             BLOCK=block)
    return out


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, dtype=torch.float16)

    def forward(self, x):
        M, K = x.shape
        w, b = self.linear.weight, self.linear.bias
        N = w.shape[0]
        unit = _unit(x, w)
        if unit < 8:  # rows not 16-byte aligned: copy them into rows of a whole number of K steps
            k_padded = triton.cdiv(K, 64) * 64
            x, w, K, unit = _padded_k(x, k_padded), _padded_k(w, k_padded), k_padded, 8
        y = torch.empty((M, N), device=x.device, dtype=x.dtype)

        def grid(meta):
            return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)

        linear_mish_mish_kernel[grid](
            x, w, b, y, M, N, K // unit, x.stride(0) // unit, w.stride(0) // unit, y.stride(0), UNIT=unit,
        )
        return y
