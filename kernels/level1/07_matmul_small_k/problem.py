"""KernelBench level 1, problem 7: matmul with a small inner dimension (K << M, N), in fp16."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """C = A @ B, A (M, K), B (K, N) with K small: the output write dominates."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


M = 32768
N = 32768
K = 64


def get_inputs():
    A = torch.randn(M, K, dtype=torch.float16)
    B = torch.randn(K, N, dtype=torch.float16)
    return [A, B]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"M": 32768, "N": 32768, "K": 64},
        {"M": 16384, "N": 16384, "K": 32},
        {"M": 20000, "N": 12345, "K": 64},
        {"M": 8192, "N": 65536, "K": 128},
        {"M": 30001, "N": 9999, "K": 48},
    ]


def get_test_cases():
    return [{"M": 128, "N": 64, "K": 64}, {"M": 100, "N": 83, "K": 48}]


def flops(case):
    return 2 * case["M"] * case["N"] * case["K"]


def bytes(case):
    return 2 * (case["M"] * case["K"] + case["K"] * case["N"] + case["M"] * case["N"])
