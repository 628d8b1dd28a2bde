"""Linear + divide + exact GELU in one kernel: the division and the GELU run on the GEMM's fp32
accumulator before the only store.

The initial version wrote the linear output h (M x N fp16) and launched an elementwise kernel that
read it back, divided and applied the GELU: for the first case 32 MB written and read again beside
a GEMM that needs only x, W and y, and its GEMM used fixed 64x64x32 tiles in row-major program
order. Here the epilogue applies bias, 1/divisor and GELU(v) = v/2 (1 + erf(v / sqrt 2)) in fp32
and rounds once; tiles are autotuned Hopper sizes (wgmma, 3-4 stages) in groups of GROUP_M rows so
that consecutive programs share W tiles in L2.
"""
import torch
import triton
import triton.language as tl
from torch import nn


def _configs():
    # 128x256 (8 warps) and 128x128 (4 warps) spill in the erf epilogue on sm_90: left out.
    shapes = [(128, 128, 64, 4, 8), (128, 128, 64, 3, 8), (64, 256, 64, 4, 8), (64, 128, 64, 4, 4),
              (128, 64, 64, 4, 4)]
    return [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8}, num_stages=s, num_warps=w)
            for m, n, k, s, w in shapes]


@triton.autotune(configs=_configs(), key=["M", "N", "K"])
@triton.jit
def linear_divide_gelu_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
    M, N, K, divisor,
    stride_xm, stride_xk, stride_wn, stride_wk, stride_ym, stride_yn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
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
    offs_k = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :] * stride_xk
    w_ptrs = w_ptr + offs_k[:, None] * stride_wk + offs_n[None, :] * stride_wn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(tl.cdiv(K, BLOCK_K)):
        left = K - k * BLOCK_K
        x = tl.load(x_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < left), other=0.0)
        w = tl.load(w_ptrs, mask=(offs_k[:, None] < left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(x, w, acc)
        x_ptrs += BLOCK_K * stride_xk
        w_ptrs += BLOCK_K * stride_wk

    n_mask = offs_n < N
    v = (acc + tl.load(b_ptr + offs_n, mask=n_mask, other=0.0).to(tl.float32)[None, :]) / divisor
    y = 0.5 * v * (1.0 + tl.math.erf(v * 0.7071067811865476))
    tl.store(y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn, y.to(y_ptr.dtype.element_ty),
             mask=(offs_m[:, None] < M) & n_mask[None, :])


class ModelNew(nn.Module):
    def __init__(self, input_size, output_size, divisor):
        super().__init__()
        self.linear = nn.Linear(input_size, output_size, dtype=torch.float16)
        self.divisor = divisor

    def forward(self, x):
        M, K = x.shape
        w, b = self.linear.weight, self.linear.bias
        N = w.shape[0]
        y = torch.empty((M, N), device=x.device, dtype=x.dtype)

        def grid(meta):
            return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)

        linear_divide_gelu_kernel[grid](
            x, w, b, y, M, N, K, self.divisor,
            x.stride(0), x.stride(1), w.stride(0), w.stride(1), y.stride(0), y.stride(1),
        )
        return y
