"""KernelBench level 1, problem 23: softmax over the last dimension of a (batch, dim) tensor, in fp32."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """y = softmax(x, dim=1)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


batch_size = 4096
dim = 32768


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 4096, "dim": 32768},
        {"batch_size": 1024, "dim": 393216},
        {"batch_size": 16384, "dim": 4097},
        {"batch_size": 2048, "dim": 65535},
        {"batch_size": 16384, "dim": 8192},
    ]


def get_test_cases():
    return [{"batch_size": 3, "dim": 1024}, {"batch_size": 4, "dim": 2500}]


def flops(case):
    return 5 * case["batch_size"] * case["dim"]


def bytes(case):
    return 2 * 4 * case["batch_size"] * case["dim"]
