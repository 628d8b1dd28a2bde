"""KernelBench level 1, problem 4: matrix-vector product C = A @ B with B of shape (K, 1), in fp16."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """C = A @ B, A (M, K), B (K, 1)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


M = 2048
K = 524288


def get_inputs():
    A = torch.randn(M, K, dtype=torch.float16)
    B = torch.randn(K, 1, dtype=torch.float16)
    return [A, B]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"M": 2048, "K": 524288},
        {"M": 4096, "K": 65536},
        {"M": 1000, "K": 200003},
        {"M": 8192, "K": 32768},
        {"M": 3001, "K": 100000},
    ]


def get_test_cases():
    return [{"M": 64, "K": 1024}, {"M": 45, "K": 1000}]


def flops(case):
    return 2 * case["M"] * case["K"]


def bytes(case):
    return 2 * (case["M"] * case["K"] + case["K"] + case["M"])
