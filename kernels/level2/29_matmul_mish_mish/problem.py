"""KernelBench level 2, problem 29: linear layer followed by Mish applied twice; fp16."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """y = mish(mish(x @ W.T + b))."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, dtype=torch.float16)

    def forward(self, x):
        x = self.linear(x)
        x = torch.nn.functional.mish(x)
        x = torch.nn.functional.mish(x)
        return x


batch_size = 1024
in_features = 8192
out_features = 8192


def get_inputs():
    return [torch.rand(batch_size, in_features, dtype=torch.float16)]


def get_init_inputs():
    return [in_features, out_features]


def get_cases():
    return [
        {"batch_size": 1024, "in_features": 8192, "out_features": 8192},
        {"batch_size": 2048, "in_features": 8192, "out_features": 4096},
        {"batch_size": 4096, "in_features": 1024, "out_features": 8192},
        {"batch_size": 1500, "in_features": 4500, "out_features": 7500},
        {"batch_size": 8191, "in_features": 2048, "out_features": 2048},
    ]


def get_test_cases():
    return [
        {"batch_size": 128, "in_features": 64, "out_features": 64},
        {"batch_size": 129, "in_features": 72, "out_features": 70},
    ]


def flops(case):
    return 2 * case["batch_size"] * case["in_features"] * case["out_features"]


def bytes(case):
    m, k, n = case["batch_size"], case["in_features"], case["out_features"]
    return 2 * (m * k + n * k + n + m * n)
