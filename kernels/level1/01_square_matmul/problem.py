"""KernelBench level 1, problem 1: square matrix multiplication C = A @ B, in fp16."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """C = A @ B for two N x N matrices."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


N = 4096


def get_inputs():
    # randn, not rand: zero-mean entries make a dropped K tile show up as a large relative error.
    A = torch.randn(N, N, dtype=torch.float16)
    B = torch.randn(N, N, dtype=torch.float16)
    return [A, B]


def get_init_inputs():
    return []


def get_cases():
    return [{"N": n} for n in (3000, 4096, 4999, 6144, 8192)]


def get_test_cases():
    return [{"N": n} for n in (64, 161)]


def flops(case):
    return 2 * case["N"] ** 3


def bytes(case):
    return 3 * case["N"] ** 2 * 2
