"""Matrix product of a modest batch of activations with a large fp16 weight, C = A @ B."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """C = A @ B."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


M = 256
N = 8192
K = 8192


def get_inputs():
    return [torch.randn(M, K, dtype=torch.float16), torch.randn(K, N, dtype=torch.float16)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"M": 256, "N": 8192, "K": 8192},
        {"M": 1024, "N": 4096, "K": 4096},
        {"M": 512, "N": 28672, "K": 4096},
    ]


def get_test_cases():
    return [
        {"M": 20, "N": 96, "K": 80},
        {"M": 50, "N": 70, "K": 130},
    ]


def flops(case):
    return 2 * M * N * K
