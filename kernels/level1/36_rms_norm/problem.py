"""KernelBench level 1, problem 36: RMS normalisation over the feature axis (dim 1) of an NCHW-like
tensor, in fp32. The reduced axis is strided: consecutive features are dim1 * dim2 apart."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """y = x / sqrt(mean(x ** 2 over dim 1) + eps)."""

    def __init__(self, num_features: int, eps: float = 1e-5):
        super().__init__()
        self.num_features = num_features
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rms = torch.sqrt(torch.mean(x ** 2, dim=1, keepdim=True) + self.eps)
        return x / rms


batch_size = 16
features = 64
dim1 = 256
dim2 = 256


def get_inputs():
    return [torch.randn(batch_size, features, dim1, dim2)]


def get_init_inputs():
    return [features]


def get_cases():
    return [
        {"batch_size": 16, "features": 64, "dim1": 256, "dim2": 256},
        {"batch_size": 8, "features": 128, "dim1": 224, "dim2": 224},
        {"batch_size": 64, "features": 64, "dim1": 128, "dim2": 128},
        {"batch_size": 4, "features": 96, "dim1": 511, "dim2": 257},
        {"batch_size": 16, "features": 32, "dim1": 256, "dim2": 511},
    ]


def get_test_cases():
    return [
        {"batch_size": 2, "features": 64, "dim1": 8, "dim2": 16},
        {"batch_size": 3, "features": 24, "dim1": 7, "dim2": 13},
    ]


def _numel(case):
    return case["batch_size"] * case["features"] * case["dim1"] * case["dim2"]


def flops(case):
    return 4 * _numel(case)


def bytes(case):
    return 2 * 4 * _numel(case)
