"""KernelBench level 2, problem 40: linear layer, scale, add the unscaled result back; bf16."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """y = s * linear(x) + linear(x)."""

    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features, dtype=torch.bfloat16)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        x = self.matmul(x)
        original_x = x.clone().detach()
        x = x * self.scaling_factor
        x = x + original_x
        return x


batch_size = 16384
in_features = 4096
out_features = 4096
scaling_factor = 0.5


def get_inputs():
    return [torch.rand(batch_size, in_features, dtype=torch.bfloat16)]


def get_init_inputs():
    return [in_features, out_features, scaling_factor]


def get_cases():
    return [
        {"batch_size": 16384, "in_features": 4096, "out_features": 4096},
        {"batch_size": 8192, "in_features": 4096, "out_features": 4096},
        {"batch_size": 4096, "in_features": 8192, "out_features": 2048},
        {"batch_size": 5000, "in_features": 3000, "out_features": 7001},
        {"batch_size": 2048, "in_features": 2048, "out_features": 8192},
    ]


def get_test_cases():
    return [
        {"batch_size": 64, "in_features": 64, "out_features": 64},
        {"batch_size": 100, "in_features": 48, "out_features": 80},
    ]


def flops(case):
    return 2 * case["batch_size"] * case["in_features"] * case["out_features"]


def bytes(case):
    m, k, n = case["batch_size"], case["in_features"], case["out_features"]
    return 2 * (m * k + n * k + n + m * n)
