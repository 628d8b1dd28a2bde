"""KernelBench level 1, problem 40: LayerNorm over the last three dimensions (features, dim1, dim2),
with an elementwise affine transform, in fp32.

Each sample is one normalised row of features * dim1 * dim2 elements, which can be millions long.
The affine parameters are drawn away from nn.LayerNorm's 1/0 defaults so that a kernel that skips
them is caught.
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    """y = LayerNorm(normalized_shape)(x)."""

    def __init__(self, normalized_shape: tuple):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)
        with torch.no_grad():
            self.ln.weight.uniform_(0.5, 1.5)
            self.ln.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


batch_size = 16
features = 64
dim1 = 256
dim2 = 256


def get_inputs():
    return [torch.rand(batch_size, features, dim1, dim2)]


def get_init_inputs():
    return [(features, dim1, dim2)]


def get_cases():
    return [
        {"batch_size": 16, "features": 64, "dim1": 256, "dim2": 256},
        {"batch_size": 128, "features": 32, "dim1": 128, "dim2": 128},
        {"batch_size": 256, "features": 16, "dim1": 96, "dim2": 97},
        {"batch_size": 48, "features": 3, "dim1": 512, "dim2": 511},
        {"batch_size": 1024, "features": 8, "dim1": 64, "dim2": 65},
    ]


def get_test_cases():
    return [
        {"batch_size": 2, "features": 4, "dim1": 16, "dim2": 32},
        {"batch_size": 3, "features": 3, "dim1": 17, "dim2": 29},
    ]


def _numel(case):
    return case["batch_size"] * case["features"] * case["dim1"] * case["dim2"]


def flops(case):
    return 8 * _numel(case)


def bytes(case):
    row = case["features"] * case["dim1"] * case["dim2"]
    return 4 * (2 * _numel(case) + 2 * row)
