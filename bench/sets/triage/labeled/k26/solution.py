import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def tile_bmm_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    bid = tl.program_id(0)
    rows = tl.arange(0, M)
    cols = tl.arange(0, N)
    ks = tl.arange(0, K)
    a = tl.load(a_ptr + bid * M * K + rows[:, None] * K + ks[None, :])
    b = tl.load(b_ptr + bid * K * N + ks[:, None] * N + cols[None, :])
    c = tl.sum(a[:, :, None] * b[None, :, :], axis=1)
    tl.store(c_ptr + bid * M * N + rows[:, None] * N + cols[None, :], c)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        batch, M, K = a.shape
        N = b.shape[2]
        c = torch.empty((batch, M, N), device=a.device, dtype=a.dtype)
        tile_bmm_kernel[(batch,)](a, b, c, M, N, K, num_warps=4)
        return c
