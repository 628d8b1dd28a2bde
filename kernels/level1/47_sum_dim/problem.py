"""KernelBench level 1, problem 47: sum over the middle dimension of a 3D tensor, keepdim, in fp32."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """y = sum(x, dim, keepdim=True)."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=self.dim, keepdim=True)


batch_size = 128
dim1 = 1024
dim2 = 1023
reduce_dim = 1


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2)]


def get_init_inputs():
    return [reduce_dim]


def get_cases():
    return [
        {"batch_size": 128, "dim1": 1024, "dim2": 1023},
        {"batch_size": 32, "dim1": 4096, "dim2": 1024},
        {"batch_size": 256, "dim1": 512, "dim2": 511},
        {"batch_size": 16, "dim1": 8192, "dim2": 2048},
        {"batch_size": 1000, "dim1": 300, "dim2": 257},
    ]


def get_test_cases():
    return [{"batch_size": 2, "dim1": 64, "dim2": 256}, {"batch_size": 3, "dim1": 45, "dim2": 131}]


def flops(case):
    return case["batch_size"] * case["dim1"] * case["dim2"]


def bytes(case):
    return 4 * case["batch_size"] * case["dim2"] * (case["dim1"] + 1)
