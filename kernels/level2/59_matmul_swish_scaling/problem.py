"""KernelBench level 2, problem 59: linear layer, Swish, scale; fp16. Small batches against wide
layers, as in KernelBench."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """y = s * swish(x @ W.T + b)."""

    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features, dtype=torch.float16)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        x = self.matmul(x)
        x = x * torch.sigmoid(x)
        x = x * self.scaling_factor
        return x


batch_size = 128
in_features = 16384
out_features = 16384
scaling_factor = 2.0


def get_inputs():
    return [torch.rand(batch_size, in_features, dtype=torch.float16)]


def get_init_inputs():
    return [in_features, out_features, scaling_factor]


def get_cases():
    return [
        {"batch_size": 128, "in_features": 16384, "out_features": 16384},
        {"batch_size": 256, "in_features": 8192, "out_features": 16384},
        {"batch_size": 512, "in_features": 16384, "out_features": 8192},
        {"batch_size": 1000, "in_features": 8191, "out_features": 8193},
        {"batch_size": 2048, "in_features": 4096, "out_features": 4096},
    ]


def get_test_cases():
    return [
        {"batch_size": 32, "in_features": 128, "out_features": 256},
        {"batch_size": 17, "in_features": 99, "out_features": 101},
    ]


def flops(case):
    return 2 * case["batch_size"] * case["in_features"] * case["out_features"]


def bytes(case):
    m, k, n = case["batch_size"], case["in_features"], case["out_features"]
    return 2 * (m * k + n * k + n + m * n)
