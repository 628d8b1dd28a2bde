"""Linear, then multiply + LeakyReLU: a tiled GEMM kernel (bias added in its epilogue) writes the
linear output, and a separate elementwise kernel applies the multiplier and the LeakyReLU."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
    M, N, K,
    stride_xm, stride_xk,
    stride_wn, stride_wk,
    stride_ym, stride_yn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, multiplier, negative_slope,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k = k0 + offs_k
        x = tl.load(x_ptr + offs_m[:, None] * stride_xm + k[None, :] * stride_xk,
                    mask=(offs_m[:, None] < M) & (k[None, :] < K), other=0.0)
        w = tl.load(w_ptr + offs_n[None, :] * stride_wn + k[:, None] * stride_wk,
                    mask=(k[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        acc += tl.dot(x, w)

    bias = tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0)
    acc += bias[None, :].to(tl.float32)
    x_2 = acc.to(tl.float32) * multiplier
    y = tl.where(x_2 >= 0, x_2, x_2 * negative_slope)
    tl.store(y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn,
             y.to(y_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, multiplier, negative_slope):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, dtype=torch.float16)
        self.multiplier = multiplier
        self.negative_slope = negative_slope

    def forward(self, x):
        M, K = x.shape
        N = self.gemm.weight.shape[0]
        h = torch.empty((M, N), device=x.device, dtype=x.dtype)
        grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))
        linear_kernel[grid](
            x, self.gemm.weight, self.gemm.bias, h, M, N, K,
            x.stride(0), x.stride(1),
            self.gemm.weight.stride(0), self.gemm.weight.stride(1),
            h.stride(0), h.stride(1),
            BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, multiplier=self.multiplier, negative_slope=self.negative_slope,
        )
        return h
