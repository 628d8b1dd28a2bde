import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def small_bmm_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    bid = tl.program_id(0)
    m = tl.arange(0, M)
    n = tl.arange(0, N)
    k = tl.arange(0, K)
    a = tl.load(a_ptr + bid * M * K + m[:, None] * K + k[None, :])
    bt = tl.load(b_ptr + bid * K * N + n[:, None] + k[None, :] * N)
    c = tl.sum(a[:, None, :] * bt[None, :, :], axis=2)
    tl.store(c_ptr + bid * M * N + m[:, None] * N + n[None, :], c)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        batch, M, K = a.shape
        N = b.shape[2]
        c = torch.empty((batch, M, N), device=a.device, dtype=a.dtype)
        small_bmm_kernel[(batch,)](a, b, c, M, N, K, num_warps=4)
        return c
