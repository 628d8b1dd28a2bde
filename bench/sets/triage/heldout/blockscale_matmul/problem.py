"""Block-scaled matrix product (the activation/weight scaling of blockwise quantisation):
C = (A * sa) @ (B * sb), with one A scale per row and 128-wide K block (stored K-block-major,
shape (K/128, M)), and one B scale per 128 x 128 block of B; operands fp16, scales fp32, output fp16."""
import torch
import torch.nn as nn

BLOCK = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b, a_scale, b_scale):
        a_full = a.float() * a_scale.t().repeat_interleave(BLOCK, dim=1)
        b_full = b.float() * b_scale.repeat_interleave(BLOCK, dim=0).repeat_interleave(BLOCK, dim=1)
        return (a_full @ b_full).to(torch.float16)


M = 4096
N = 4096
K = 4096


def get_inputs():
    a = torch.randn(M, K, dtype=torch.float16)
    b = torch.randn(K, N, dtype=torch.float16)
    a_scale = torch.rand(K // BLOCK, M) * 0.1 + 0.01
    b_scale = torch.rand(K // BLOCK, N // BLOCK) * 0.1 + 0.01
    return [a, b, a_scale, b_scale]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"M": 4096, "N": 4096, "K": 4096},
        {"M": 8192, "N": 7168, "K": 2048},
        {"M": 2048, "N": 2048, "K": 7168},
    ]


def get_test_cases():
    return [{"M": 128, "N": 256, "K": 256}, {"M": 256, "N": 128, "K": 384}]


def flops(case):
    return 2 * M * N * K
