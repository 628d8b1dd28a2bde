"""KernelBench level 2, problem 12: linear layer, multiply by a constant, LeakyReLU; fp16."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """y = leaky_relu((x @ W.T + b) * multiplier, negative_slope)."""

    def __init__(self, in_features, out_features, multiplier, negative_slope):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, dtype=torch.float16)
        self.multiplier = multiplier
        self.leaky_relu = nn.LeakyReLU(negative_slope)

    def forward(self, x):
        x = self.gemm(x)
        x = x * self.multiplier
        x = self.leaky_relu(x)
        return x


batch_size = 1024
in_features = 8192
out_features = 8192
multiplier = 2.0
negative_slope = 0.1


def get_inputs():
    return [torch.rand(batch_size, in_features, dtype=torch.float16)]


def get_init_inputs():
    return [in_features, out_features, multiplier, negative_slope]


def get_cases():
    return [
        {"batch_size": 1024, "in_features": 8192, "out_features": 8192},
        {"batch_size": 512, "in_features": 8192, "out_features": 16384},
        {"batch_size": 2048, "in_features": 3072, "out_features": 8191},
        {"batch_size": 8192, "in_features": 4096, "out_features": 1024},
        {"batch_size": 1537, "in_features": 6000, "out_features": 5000},
    ]


def get_test_cases():
    return [
        {"batch_size": 64, "in_features": 64, "out_features": 64},
        {"batch_size": 65, "in_features": 90, "out_features": 130},
    ]


def flops(case):
    return 2 * case["batch_size"] * case["in_features"] * case["out_features"]


def bytes(case):
    m, k, n = case["batch_size"], case["in_features"], case["out_features"]
    return 2 * (m * k + n * k + n + m * n)
