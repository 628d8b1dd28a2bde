"""KernelBench level 2, problem 76: bias-free linear layer, add a bias parameter, ReLU; bf16."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """y = relu(x @ W.T + bias)."""

    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False, dtype=torch.bfloat16)
        self.bias = nn.Parameter(torch.randn(bias_shape, dtype=torch.bfloat16))

    def forward(self, x):
        x = self.gemm(x)
        x = x + self.bias
        x = torch.relu(x)
        return x


batch_size = 1024
in_features = 8192
out_features = 8192


def get_inputs():
    return [torch.rand(batch_size, in_features, dtype=torch.bfloat16)]


def get_init_inputs():
    return [in_features, out_features, (out_features,)]


def get_cases():
    return [
        {"batch_size": 1024, "in_features": 8192, "out_features": 8192},
        {"batch_size": 2048, "in_features": 8192, "out_features": 4096},
        {"batch_size": 4096, "in_features": 4096, "out_features": 4096},
        {"batch_size": 1111, "in_features": 7777, "out_features": 5555},
        {"batch_size": 8192, "in_features": 1024, "out_features": 8192},
    ]


def get_test_cases():
    return [
        {"batch_size": 64, "in_features": 64, "out_features": 64},
        {"batch_size": 90, "in_features": 70, "out_features": 100},
    ]


def flops(case):
    return 2 * case["batch_size"] * case["in_features"] * case["out_features"]


def bytes(case):
    m, k, n = case["batch_size"], case["in_features"], case["out_features"]
    return 2 * (m * k + n * k + n + m * n)
