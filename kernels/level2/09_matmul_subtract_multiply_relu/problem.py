"""KernelBench level 2, problem 9: linear layer, subtract a constant, multiply by a constant, ReLU;
fp16 activations and weights.

subtract_value is 0.25 rather than KernelBench's 2.0: the linear outputs here have a standard
deviation near 0.3, so subtracting 2.0 would make the ReLU output almost all zeros, and a kernel
that wrote zeros would pass.
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    """y = relu((x @ W.T + b - subtract_value) * multiply_value)."""

    def __init__(self, in_features, out_features, subtract_value, multiply_value):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, dtype=torch.float16)
        self.subtract_value = subtract_value
        self.multiply_value = multiply_value

    def forward(self, x):
        x = self.linear(x)
        x = x - self.subtract_value
        x = x * self.multiply_value
        x = torch.relu(x)
        return x


batch_size = 1024
in_features = 8192
out_features = 8192
subtract_value = 0.25
multiply_value = 1.5


def get_inputs():
    return [torch.rand(batch_size, in_features, dtype=torch.float16)]


def get_init_inputs():
    return [in_features, out_features, subtract_value, multiply_value]


def get_cases():
    return [
        {"batch_size": 1024, "in_features": 8192, "out_features": 8192},
        {"batch_size": 2048, "in_features": 4096, "out_features": 4096},
        {"batch_size": 4096, "in_features": 2048, "out_features": 3000},
        {"batch_size": 1000, "in_features": 5000, "out_features": 7000},
        {"batch_size": 3333, "in_features": 4096, "out_features": 2047},
    ]


def get_test_cases():
    return [
        {"batch_size": 64, "in_features": 64, "out_features": 128},
        {"batch_size": 70, "in_features": 100, "out_features": 90},
    ]


def flops(case):
    return 2 * case["batch_size"] * case["in_features"] * case["out_features"]


def bytes(case):
    m, k, n = case["batch_size"], case["in_features"], case["out_features"]
    return 2 * (m * k + n * k + n + m * n)
