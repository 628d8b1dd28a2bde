"""KernelBench level 1, problem 19: ReLU, in fp32."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """y = relu(x), elementwise."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


batch_size = 4096
dim = 65536


def get_inputs():
    # randn, not rand: half the inputs must be negative for ReLU to do anything.
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 4096, "dim": 65536},
        {"batch_size": 8192, "dim": 8191},
        {"batch_size": 1000, "dim": 100003},
        {"batch_size": 16384, "dim": 16384},
        {"batch_size": 65537, "dim": 1023},
    ]


def get_test_cases():
    return [{"batch_size": 4, "dim": 1024}, {"batch_size": 7, "dim": 333}]


def flops(case):
    return case["batch_size"] * case["dim"]


def bytes(case):
    return 2 * 4 * case["batch_size"] * case["dim"]
