"""Dense matrix product C = A @ B, fp16 inputs and output (B given as [K, N])."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b):
        return a @ b


M = 8192
N = 8192
K = 8192


def get_inputs():
    return [torch.randn(M, K, dtype=torch.float16), torch.randn(K, N, dtype=torch.float16)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"M": 8192, "N": 8192, "K": 8192},
        {"M": 4096, "N": 14336, "K": 4096},
        {"M": 6000, "N": 5120, "K": 7168},
    ]


def get_test_cases():
    return [
        {"M": 100, "N": 96, "K": 80},
        {"M": 128, "N": 128, "K": 64},
    ]


def flops(case):
    return 2 * case["M"] * case["N"] * case["K"]
