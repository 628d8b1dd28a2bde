import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M = 128, 128, 64, 8


@triton.jit
def gathered_linear_kernel(x_ptr, ids_ptr, w_ptr, y_ptr, M, N, K, stride_x, stride_w, stride_y,
                           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                           GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    n_m = tl.cdiv(M, BLOCK_M)
    n_n = tl.cdiv(N, BLOCK_N)
    group = pid // (GROUP_M * n_n)
    first = group * GROUP_M
    size = min(n_m - first, GROUP_M)
    pid_m = first + (pid % (GROUP_M * n_n)) % size
    pid_n = (pid % (GROUP_M * n_n)) // size

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    rows = tl.load(ids_ptr + offs_m, mask=offs_m < M, other=0).to(tl.int32)
    x_ptrs = x_ptr + rows[:, None] * stride_x + offs_k[None, :]
    w_ptrs = w_ptr + offs_n[None, :] * stride_w + offs_k[:, None]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_mask = offs_k < K - k * BLOCK_K
        a = tl.load(x_ptrs, mask=k_mask[None, :], other=0.0)
        b = tl.load(w_ptrs, mask=k_mask[:, None] & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K
    y_ptrs = y_ptr + offs_m[:, None] * stride_y + offs_n[None, :]
    tl.store(y_ptrs, acc.to(tl.bfloat16), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self, hidden, out_features):
        super().__init__()
        self.fc = nn.Linear(hidden, out_features, bias=False, dtype=torch.bfloat16)

    def forward(self, x, token_ids):
        w = self.fc.weight
        M, K, N = token_ids.numel(), x.shape[1], w.shape[0]
        y = torch.empty((M, N), device=x.device, dtype=torch.bfloat16)
        grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
        gathered_linear_kernel[grid](x, token_ids, w, y, M, N, K, x.stride(0), w.stride(0), y.stride(0),
                                     BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=GROUP_M,
                                     num_warps=8, num_stages=1)
        return y
