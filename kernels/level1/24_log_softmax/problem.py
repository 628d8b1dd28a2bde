"""KernelBench level 1, problem 24: log-softmax over dim 1 of a (batch, dim) tensor, in fp32."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """y = log_softmax(x, dim)."""

    def __init__(self, dim: int = 1):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(x, dim=self.dim)


batch_size = 32768
dim = 4096


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [1]


def get_cases():
    return [
        {"batch_size": 32768, "dim": 4096},
        {"batch_size": 65536, "dim": 1000},
        {"batch_size": 16384, "dim": 8192},
        {"batch_size": 50000, "dim": 2049},
        {"batch_size": 131072, "dim": 512},
    ]


def get_test_cases():
    return [{"batch_size": 4, "dim": 512}, {"batch_size": 5, "dim": 1000}]


def flops(case):
    return 5 * case["batch_size"] * case["dim"]


def bytes(case):
    return 2 * 4 * case["batch_size"] * case["dim"]
