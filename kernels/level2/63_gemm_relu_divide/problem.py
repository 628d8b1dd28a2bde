"""KernelBench level 2, problem 63: linear layer, ReLU, divide by a constant; bf16."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """y = relu(x @ W.T + b) / divisor."""

    def __init__(self, in_features, out_features, divisor):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, dtype=torch.bfloat16)
        self.divisor = divisor

    def forward(self, x):
        x = self.linear(x)
        x = torch.relu(x)
        x = x / self.divisor
        return x


batch_size = 1024
in_features = 8192
out_features = 8192
divisor = 2.0


def get_inputs():
    return [torch.rand(batch_size, in_features, dtype=torch.bfloat16)]


def get_init_inputs():
    return [in_features, out_features, divisor]


def get_cases():
    return [
        {"batch_size": 1024, "in_features": 8192, "out_features": 8192},
        {"batch_size": 2048, "in_features": 4096, "out_features": 4096},
        {"batch_size": 512, "in_features": 16384, "out_features": 8192},
        {"batch_size": 3001, "in_features": 4096, "out_features": 4096},
        {"batch_size": 4096, "in_features": 2048, "out_features": 5000},
    ]


def get_test_cases():
    return [
        {"batch_size": 64, "in_features": 64, "out_features": 64},
        {"batch_size": 80, "in_features": 45, "out_features": 70},
    ]


def flops(case):
    return 2 * case["batch_size"] * case["in_features"] * case["out_features"]


def bytes(case):
    m, k, n = case["batch_size"], case["in_features"], case["out_features"]
    return 2 * (m * k + n * k + n + m * n)
