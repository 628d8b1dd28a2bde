"""Linear + scale + Hardtanh + GELU in one kernel: a 64 x 64 tiled GEMM with the elementwise chain
(exact, erf-based GELU) in its epilogue."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_scale_hardtanh_gelu_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
    M, N, K,
    stride_xm, stride_xk,
    stride_wn, stride_wk,
    stride_ym, stride_yn,
    scaling_factor, min_val, max_val,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    x_ptrs = tl.max_contiguous(tl.multiple_of(x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :] * stride_xk, [1, 4]), [1, 2])
    w_ptrs = w_ptr + offs_k[:, None] * stride_wk + offs_n[None, :] * stride_wn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        x = tl.load(x_ptrs, mask=tl.max_constancy((offs_m[:, None] < M) & (offs_k[None, :] + k < K), [1, 2]), other=0.0)
        w = tl.load(w_ptrs, mask=(offs_k[:, None] + k < K) & (offs_n[None, :] < N), other=0.0)
        acc += tl.dot(x, w)
        x_ptrs += BLOCK_K * stride_xk
        w_ptrs += BLOCK_K * stride_wk

    bias = tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
    y = (acc + bias[None, :]) * scaling_factor
    y = tl.minimum(tl.maximum(y, min_val), max_val)
    y = 0.5 * y * (1.0 + tl.math.erf(y * 0.7071067811865476))
    y_ptrs = y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn
    tl.store(y_ptrs, y.to(y_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scaling_factor, hardtanh_min, hardtanh_max):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, dtype=torch.float16)
        self.scaling_factor = scaling_factor
        self.hardtanh_min = hardtanh_min
        self.hardtanh_max = hardtanh_max

    def forward(self, x):
        M, K = x.shape
        w, b = self.gemm.weight, self.gemm.bias
        N = w.shape[0]
        y = torch.empty((M, N), device=x.device, dtype=x.dtype)
        grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))
        linear_scale_hardtanh_gelu_kernel[grid](
            x, w, b, y, M, N, K,
            x.stride(0), x.stride(1), w.stride(0), w.stride(1), y.stride(0), y.stride(1),
            self.scaling_factor, self.hardtanh_min, self.hardtanh_max,
            BLOCK_M=64, BLOCK_N=64, BLOCK_K=32,
        )
        return y
