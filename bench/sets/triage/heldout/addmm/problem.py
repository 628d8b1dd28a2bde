"""addmm: C = bias + A @ B with a row-broadcast bias, fp16, large square and rectangular sizes."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, bias, a, b):
        return torch.addmm(bias, a, b)


M = 8192
N = 8192
K = 8192


def get_inputs():
    return [torch.randn(N, dtype=torch.float16), torch.randn(M, K, dtype=torch.float16),
            torch.randn(K, N, dtype=torch.float16)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"M": 8192, "N": 8192, "K": 8192},
        {"M": 16384, "N": 12288, "K": 4096},
    ]


def get_test_cases():
    return [{"M": 64, "N": 96, "K": 80}, {"M": 130, "N": 70, "K": 200}]


def flops(case):
    return 2 * M * N * K
