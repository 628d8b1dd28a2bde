"""KernelBench level 1, problem 17: matmul with a transposed right operand, C = A @ B.T, in fp16."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """C = A @ B.T with A (M, K) and B (N, K): the layout of a linear layer's weight."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B.T)


M = 2048
K = 8192
N = 4096


def get_inputs():
    A = torch.randn(M, K, dtype=torch.float16)
    B = torch.randn(N, K, dtype=torch.float16)
    return [A, B]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"M": 2048, "K": 8192, "N": 4096},
        {"M": 4096, "K": 4096, "N": 4096},
        {"M": 1023, "K": 8191, "N": 4097},
        {"M": 8192, "K": 2048, "N": 3072},
        {"M": 3333, "K": 5555, "N": 2222},
    ]


def get_test_cases():
    return [{"M": 128, "K": 64, "N": 64}, {"M": 130, "K": 77, "N": 65}]


def flops(case):
    return 2 * case["M"] * case["N"] * case["K"]


def bytes(case):
    return 2 * (case["M"] * case["K"] + case["N"] * case["K"] + case["M"] * case["N"])
