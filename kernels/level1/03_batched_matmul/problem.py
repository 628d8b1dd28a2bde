"""KernelBench level 1, problem 3: batched matrix multiplication C[b] = A[b] @ B[b], in bf16."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """C = bmm(A, B) with A (batch, m, k), B (batch, k, n)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.bmm(A, B)


batch_size = 128
m = 512
k = 1024
n = 2048


def get_inputs():
    A = torch.randn(batch_size, m, k, dtype=torch.bfloat16)
    B = torch.randn(batch_size, k, n, dtype=torch.bfloat16)
    return [A, B]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 128, "m": 512, "k": 1024, "n": 2048},
        {"batch_size": 96, "m": 384, "k": 768, "n": 1536},
        {"batch_size": 50, "m": 1021, "k": 1023, "n": 1025},
        {"batch_size": 16, "m": 2048, "k": 2048, "n": 2048},
        {"batch_size": 256, "m": 256, "k": 500, "n": 700},
    ]


def get_test_cases():
    return [{"batch_size": 3, "m": 64, "k": 64, "n": 64}, {"batch_size": 2, "m": 70, "k": 50, "n": 90}]


def flops(case):
    return 2 * case["batch_size"] * case["m"] * case["n"] * case["k"]


def bytes(case):
    b, m, k, n = case["batch_size"], case["m"], case["k"], case["n"]
    return 2 * b * (m * k + k * n + m * n)
