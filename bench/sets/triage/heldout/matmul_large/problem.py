"""Dense matrix product C = A @ B in fp16 at large sizes."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """C = A @ B."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


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
        {"M": 16384, "N": 16384, "K": 4096},
        {"M": 12288, "N": 8192, "K": 6144},
    ]


def get_test_cases():
    return [
        {"M": 64, "N": 96, "K": 80},
        {"M": 130, "N": 70, "K": 200},
    ]


def flops(case):
    return 2 * M * N * K
