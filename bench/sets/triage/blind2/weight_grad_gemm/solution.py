import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _wgrad_kernel(dy_ptr, x_ptr, dw_ptr, T, N, K, stride_dyt, stride_xt, stride_dwn,
                  BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_T: tl.constexpr):
    pid_n = tl.program_id(0)
    pid_k = tl.program_id(1)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    offs_t = tl.arange(0, BLOCK_T)
    dy_ptrs = dy_ptr + offs_t[None, :] * stride_dyt + offs_n[:, None]
    x_ptrs = x_ptr + offs_t[:, None] * stride_xt + offs_k[None, :]
    acc = tl.zeros((BLOCK_N, BLOCK_K), dtype=tl.float32)
    for t in range(0, T, BLOCK_T):
        dy = tl.load(dy_ptrs, mask=(offs_n[:, None] < N) & (offs_t[None, :] + t < T), other=0.0)
        x = tl.load(x_ptrs, mask=(offs_t[:, None] + t < T) & (offs_k[None, :] < K), other=0.0)
        acc = tl.dot(dy, x, acc)
        dy_ptrs += BLOCK_T * stride_dyt
        x_ptrs += BLOCK_T * stride_xt
    tl.store(dw_ptr + offs_n[:, None] * stride_dwn + offs_k[None, :], acc,
             mask=(offs_n[:, None] < N) & (offs_k[None, :] < K))


class ModelNew(nn.Module):
    def forward(self, grad_out, x):
        T, N = grad_out.shape
        K = x.shape[1]
        dw = torch.empty((N, K), device=x.device, dtype=torch.float32)
        grid = (triton.cdiv(N, 128), triton.cdiv(K, 128))
        _wgrad_kernel[grid](grad_out, x, dw, T, N, K, grad_out.stride(0), x.stride(0), dw.stride(0),
                            BLOCK_N=128, BLOCK_K=128, BLOCK_T=64, num_warps=8, num_stages=3)
        return dw
