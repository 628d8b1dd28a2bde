"""KernelBench level 1, problem 51: argmax over the middle dimension of a 3D tensor, in fp32."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """y = argmax(x, dim) (int64, the dimension removed)."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.argmax(x, dim=self.dim)


batch_size = 128
dim1 = 1024
dim2 = 1023


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2)]


def get_init_inputs():
    return [1]


def get_cases():
    return [
        {"batch_size": 128, "dim1": 1024, "dim2": 1023},
        {"batch_size": 64, "dim1": 4096, "dim2": 511},
        {"batch_size": 256, "dim1": 256, "dim2": 2049},
        {"batch_size": 16, "dim1": 8192, "dim2": 1024},
        {"batch_size": 1000, "dim1": 100, "dim2": 999},
    ]


def get_test_cases():
    return [{"batch_size": 2, "dim1": 40, "dim2": 256}, {"batch_size": 3, "dim1": 33, "dim2": 300}]


def flops(case):
    return case["batch_size"] * case["dim1"] * case["dim2"]


def bytes(case):
    return case["batch_size"] * case["dim2"] * (4 * case["dim1"] + 8)
