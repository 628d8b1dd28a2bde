"""Dense matrix product C = A @ B in fp32 (tf32 tolerances accepted)."""
import torch
import torch.nn as nn

ALLOW_TF32 = True


class Model(nn.Module):
    """C = A @ B."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


M = 4096
N = 4096
K = 4096


def get_inputs():
    return [torch.randn(M, K, dtype=torch.float32), torch.randn(K, N, dtype=torch.float32)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"M": 4096, "N": 4096, "K": 4096},
        {"M": 8192, "N": 4096, "K": 2048},
        {"M": 2048, "N": 8192, "K": 8192},
    ]


def get_test_cases():
    return [
        {"M": 64, "N": 48, "K": 80},
        {"M": 100, "N": 130, "K": 70},
    ]


def flops(case):
    return 2 * M * N * K
