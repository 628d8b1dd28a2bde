"""KernelBench level 1, problem 26: GELU (exact, erf form), in fp32."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """y = gelu(x) = x * Phi(x), elementwise."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(x)


batch_size = 4096
dim = 32768


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 4096, "dim": 32768},
        {"batch_size": 8192, "dim": 12289},
        {"batch_size": 2048, "dim": 65535},
        {"batch_size": 16384, "dim": 8192},
        {"batch_size": 3000, "dim": 30000},
    ]


def get_test_cases():
    return [{"batch_size": 2, "dim": 1024}, {"batch_size": 5, "dim": 313}]


def flops(case):
    return 8 * case["batch_size"] * case["dim"]


def bytes(case):
    return 2 * 4 * case["batch_size"] * case["dim"]
