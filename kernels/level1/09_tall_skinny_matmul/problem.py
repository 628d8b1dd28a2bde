"""KernelBench level 1, problem 9: tall-skinny matmul, A (M, N) @ B (N, M) with N << M, in fp16.

The product is a large M x M matrix built from a thin inner dimension (an outer-product-like
workload bound by the output write).
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    """C = A @ B with A tall and skinny."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


M = 32768
N = 32


def get_inputs():
    A = torch.randn(M, N, dtype=torch.float16)
    B = torch.randn(N, M, dtype=torch.float16)
    return [A, B]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"M": 16384, "N": 16},
        {"M": 32768, "N": 32},
        {"M": 20000, "N": 24},
        {"M": 24575, "N": 32},
        {"M": 12288, "N": 64},
    ]


def get_test_cases():
    return [{"M": 128, "N": 16}, {"M": 99, "N": 24}]


def flops(case):
    return 2 * case["M"] * case["M"] * case["N"]


def bytes(case):
    return 2 * (2 * case["M"] * case["N"] + case["M"] * case["M"])
