"""KernelBench level 2, problem 30: linear layer, GroupNorm over the features, Hardtanh; fp16.

The GroupNorm affine parameters are drawn away from their 1/0 defaults so that a kernel that skips
them is caught.
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    """y = hardtanh(group_norm(x @ W.T + b))."""

    def __init__(self, in_features, out_features, num_groups, hardtanh_min, hardtanh_max):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, dtype=torch.float16)
        self.group_norm = nn.GroupNorm(num_groups, out_features, dtype=torch.float16)
        with torch.no_grad():
            self.group_norm.weight.uniform_(0.5, 1.5)
            self.group_norm.bias.uniform_(-0.5, 0.5)
        self.hardtanh = nn.Hardtanh(min_val=hardtanh_min, max_val=hardtanh_max)

    def forward(self, x):
        x = self.gemm(x)
        x = self.group_norm(x)
        x = self.hardtanh(x)
        return x


batch_size = 1024
in_features = 8192
out_features = 8192
num_groups = 16
hardtanh_min = -2.0
hardtanh_max = 2.0


def get_inputs():
    return [torch.rand(batch_size, in_features, dtype=torch.float16)]


def get_init_inputs():
    return [in_features, out_features, num_groups, hardtanh_min, hardtanh_max]


def get_cases():
    return [
        {"batch_size": 1024, "in_features": 8192, "out_features": 8192, "num_groups": 16},
        {"batch_size": 2048, "in_features": 4096, "out_features": 4096, "num_groups": 32},
        {"batch_size": 4096, "in_features": 2048, "out_features": 3072, "num_groups": 8},
        {"batch_size": 1000, "in_features": 6000, "out_features": 6144, "num_groups": 48},
        {"batch_size": 3000, "in_features": 4000, "out_features": 2000, "num_groups": 10},
    ]


def get_test_cases():
    return [
        {"batch_size": 16, "in_features": 64, "out_features": 128, "num_groups": 8},
        {"batch_size": 20, "in_features": 70, "out_features": 120, "num_groups": 6},
    ]


def flops(case):
    return 2 * case["batch_size"] * case["in_features"] * case["out_features"]


def bytes(case):
    m, k, n = case["batch_size"], case["in_features"], case["out_features"]
    return 2 * (m * k + n * k + 3 * n + m * n)
