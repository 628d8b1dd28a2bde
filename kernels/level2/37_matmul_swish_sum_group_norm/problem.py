"""KernelBench level 2, problem 37: linear layer, Swish, add a bias parameter, GroupNorm; fp16.

The GroupNorm affine parameters are drawn away from their 1/0 defaults so that a kernel that skips
them is caught.
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    """y = group_norm(swish(x @ W.T + b) + bias)."""

    def __init__(self, in_features, out_features, num_groups, bias_shape):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features, dtype=torch.float16)
        self.bias = nn.Parameter(torch.randn(bias_shape, dtype=torch.float16))
        self.group_norm = nn.GroupNorm(num_groups, out_features, dtype=torch.float16)
        with torch.no_grad():
            self.group_norm.weight.uniform_(0.5, 1.5)
            self.group_norm.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        x = self.matmul(x)
        x = torch.sigmoid(x) * x
        x = x + self.bias
        x = self.group_norm(x)
        return x


batch_size = 32768
in_features = 1024
out_features = 4096
num_groups = 64


def get_inputs():
    return [torch.rand(batch_size, in_features, dtype=torch.float16)]


def get_init_inputs():
    return [in_features, out_features, num_groups, (out_features,)]


def get_cases():
    return [
        {"batch_size": 32768, "in_features": 1024, "out_features": 4096, "num_groups": 64},
        {"batch_size": 8192, "in_features": 2048, "out_features": 4096, "num_groups": 32},
        {"batch_size": 16384, "in_features": 1024, "out_features": 2048, "num_groups": 16},
        {"batch_size": 4000, "in_features": 3000, "out_features": 3000, "num_groups": 30},
        {"batch_size": 2048, "in_features": 4096, "out_features": 8192, "num_groups": 128},
    ]


def get_test_cases():
    return [
        {"batch_size": 16, "in_features": 64, "out_features": 128, "num_groups": 4},
        {"batch_size": 24, "in_features": 40, "out_features": 150, "num_groups": 5},
    ]


def flops(case):
    return 2 * case["batch_size"] * case["in_features"] * case["out_features"]


def bytes(case):
    m, k, n = case["batch_size"], case["in_features"], case["out_features"]
    return 2 * (m * k + n * k + 4 * n + m * n)
