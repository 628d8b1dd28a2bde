"""KernelBench level 1, problem 2: matrix multiplication C = A @ B with A (M, K), B (K, N), in bf16."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """C = A @ B."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


M = 2048
K = 8192
N = 4096


def get_inputs():
    A = torch.randn(M, K, dtype=torch.bfloat16)
    B = torch.randn(K, N, dtype=torch.bfloat16)
    return [A, B]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"M": 2048, "K": 8192, "N": 4096},
        {"M": 4096, "K": 2048, "N": 8192},
        {"M": 2500, "K": 7000, "N": 3333},
        {"M": 3000, "K": 4095, "N": 5003},
        {"M": 8192, "K": 1024, "N": 8192},
    ]


def get_test_cases():
    return [{"M": 64, "K": 96, "N": 128}, {"M": 77, "K": 45, "N": 131}]


def flops(case):
    return 2 * case["M"] * case["N"] * case["K"]


def bytes(case):
    return 2 * (case["M"] * case["K"] + case["K"] * case["N"] + case["M"] * case["N"])
