"""Matrix product with a long reduction dimension and a small output (e.g. a weight gradient
X.T @ dY over many tokens): fp16 operands, fp32 result."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a.float(), b.float())


M = 1024
N = 1024
K = 65536

ALLOW_TF32 = True


def get_inputs():
    return [torch.randn(M, K, dtype=torch.float16), torch.randn(K, N, dtype=torch.float16)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"M": 1024, "N": 1024, "K": 65536},
        {"M": 768, "N": 768, "K": 131072},
    ]


def get_test_cases():
    return [{"M": 64, "N": 96, "K": 1000}, {"M": 70, "N": 40, "K": 2000}]


def flops(case):
    return 2 * M * N * K
