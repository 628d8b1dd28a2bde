"""Linear + Swish + bias fused in the GEMM epilogue (128 x 64 tiles), then a GroupNorm kernel with
one program per (row, group) holding the group's channels in one block."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_swish_bias_kernel(
    x_ptr, w_ptr, b_ptr, extra_bias_ptr, y_ptr,
    M, N, K,
    stride_xm, stride_xk,
    stride_wn, stride_wk,
    stride_ym, stride_yn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
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
        w = tl.load(w_ptr + k[:, None] * stride_wk + offs_n[None, :] * stride_wn,
                    mask=(k[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        acc += tl.dot(x, w)

    n_mask = offs_n < N
    lin = acc + tl.load(b_ptr + offs_n, mask=n_mask, other=0.0).to(tl.float32)[None, :]
    y = lin * tl.sigmoid(lin)
    y = y + tl.load(extra_bias_ptr + offs_n, mask=n_mask, other=0.0).to(tl.float32)[None, :]
    tl.store(y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn,
             y.to(y_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & n_mask[None, :])


@triton.jit
def group_norm_kernel(
    x_ptr, gamma_ptr, beta_ptr, y_ptr,
    channels_per_group, stride_row, eps,
    BLOCK_SIZE: tl.constexpr,
):
    row = tl.program_id(0)
    group = tl.program_id(1)
    offs = tl.arange(0, BLOCK_SIZE)
    mask = offs < channels_per_group
    channels = group * channels_per_group + offs
    x = tl.load(x_ptr + row * stride_row + channels, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / channels_per_group
    xc = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / channels_per_group
    gamma = tl.load(gamma_ptr + channels, mask=mask, other=0.0).to(tl.float32)
    beta = tl.load(beta_ptr + channels, mask=mask, other=0.0).to(tl.float32)
    y = xc / tl.sqrt(var + eps) * gamma + beta
    tl.store(y_ptr + row * stride_row + channels, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, num_groups, bias_shape):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features, dtype=torch.float16)
        self.bias = nn.Parameter(torch.randn(bias_shape, dtype=torch.float16))
        self.group_norm = nn.GroupNorm(num_groups, out_features, dtype=torch.float16)
        with torch.no_grad():
            self.group_norm.weight.uniform_(0.5, 1.5)
            self.group_norm.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        M, K = x.shape
        w = self.matmul.weight
        N = w.shape[0]
        h = torch.empty((M, N), device=x.device, dtype=x.dtype)
        BLOCK_M, BLOCK_N, BLOCK_K = 128, 64, 32
        grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
        linear_swish_bias_kernel[grid](
            x, w, self.matmul.bias, self.bias, h, M, N, K,
            x.stride(0), x.stride(1), w.stride(0), w.stride(1), h.stride(0), h.stride(1),
            BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
        )
        groups = self.group_norm.num_groups
        channels_per_group = N // groups
        y = torch.empty_like(h)
        group_norm_kernel[(M, groups)](
            h, self.group_norm.weight, self.group_norm.bias, y,
            channels_per_group, h.stride(0), self.group_norm.eps,
            BLOCK_SIZE=triton.next_power_of_2(channels_per_group),
        )
        return y
