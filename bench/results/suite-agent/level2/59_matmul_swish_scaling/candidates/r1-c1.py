"""Linear + Swish + scale: an autotuned, pipelined Hopper GEMM with the activation in its epilogue,
its operand loads provably 16-byte wide on every case.

The initial version already fused the epilogue but ran fixed 64x64x32 tiles in row-major program
order with no pipelining hints, and on the case whose rows are 8191 elements long (x and W rows
start on odd 2-byte offsets) its loads were single fp16s, so the pipeliner could not turn them into
asynchronous copies. Here:
- the K extent and the row strides reach the kernel in units of 8 elements (multiplied back
  inside), so Triton can prove 16-byte alignment of every operand row where it holds; where it does
  not (K % 8 != 0), x and W are first copied once into zero-padded rows of a multiple of 8
  elements and the GEMM runs on the copies: one bandwidth pass over W (about 300 MB moved for
  1000 x 8191 x 8193, some 40% of that GEMM's own time at full speed), against a dot loop whose
  loads cannot be pipelined at all;
- tiles are Hopper-sized (wgmma, 3-4 stages), autotuned per shape, and taken in groups of GROUP_M
  rows so that the few row tiles of a small batch read each W tile from L2 rather than HBM.
"""
import torch
import triton
import triton.language as tl
from torch import nn

UNIT = 8  # elements per 16 bytes of fp16


def _configs():
    shapes = [(128, 128, 64, 4, 8), (128, 64, 64, 4, 4), (64, 128, 64, 4, 4), (128, 256, 64, 3, 8),
              (64, 64, 64, 4, 4)]
    return [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8}, num_stages=s, num_warps=w)
            for m, n, k, s, w in shapes]


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


@triton.autotune(configs=_configs(), key=["M", "N", "k_units"])
@triton.jit
def linear_swish_scale_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
    M, N, k_units, xm_units, wn_units, stride_ym, scaling_factor,
    UNIT: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
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

    n_mask = offs_n < N
    h = acc + tl.load(b_ptr + offs_n, mask=n_mask, other=0.0).to(tl.float32)[None, :]
    y = h * tl.sigmoid(h) * scaling_factor
    tl.store(y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :], y.to(y_ptr.dtype.element_ty),
             mask=(offs_m[:, None] < M) & n_mask[None, :])


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
    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features, dtype=torch.float16)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        M, _ = x.shape
        w, b = self.matmul.weight, self.matmul.bias
        N = w.shape[0]
        x, w = _aligned_rows(x), _aligned_rows(w)
        K = x.shape[1]  # padded with zeros, which add nothing to the product
        y = torch.empty((M, N), device=x.device, dtype=x.dtype)

        def grid(meta):
            return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)

        linear_swish_scale_kernel[grid](
            x, w, b, y, M, N, K // UNIT, x.stride(0) // UNIT, w.stride(0) // UNIT, y.stride(0),
            self.scaling_factor, UNIT=UNIT,
        )
        return y
