"""Linear + row sum fused: each GEMM tile adds the bias, sums its rows and atomically adds the partial
sums into an fp32 buffer; a second kernel applies the rest of the chain. max, mean and logsumexp over
a size-1 dimension return their input, so that kernel only converts the sums to the output dtype."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_row_sum_kernel(
    x_ptr, w_ptr, b_ptr, sum_ptr,
    M, N, K,
    stride_xm, stride_xk,
    stride_wn, stride_wk,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :] * stride_xk
    w_ptrs = w_ptr + offs_k[:, None] * stride_wk + offs_n[None, :] * stride_wn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        x = tl.load(x_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] + k < K), other=0.0)
        w = tl.load(w_ptrs, mask=(offs_k[:, None] + k < K) & (offs_n[None, :] < N), other=0.0)
        acc += tl.dot(x, w)
        x_ptrs += BLOCK_K * stride_xk
        w_ptrs += BLOCK_K * stride_wk

    bias = tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
    acc = tl.where(offs_n[None, :] < N, acc + bias[None, :], 0.0)
    tl.atomic_add(sum_ptr + offs_m, tl.sum(acc, axis=1), mask=offs_m < M)


@triton.jit
def finish_kernel(sum_ptr, y_ptr, M, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < M
    s = tl.load(sum_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, s.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, dtype=torch.float16)

    def forward(self, x):
        M, K = x.shape
        w, b = self.linear.weight, self.linear.bias
        N = w.shape[0]
        sums = torch.zeros(M, device=x.device, dtype=torch.float32)
        BLOCK_M, BLOCK_N, BLOCK_K = 64, 128, 32
        grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
        linear_row_sum_kernel[grid](
            x, w, b, sums, M, N, K,
            x.stride(0), x.stride(1), w.stride(0), w.stride(1),
            BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
        )
        y = torch.empty((M, 1), device=x.device, dtype=x.dtype)
        finish_kernel[(triton.cdiv(M, 1024),)](sums, y, M, BLOCK_SIZE=1024)
        return y
