"""KernelBench level 2, problem 53: linear layer, scale, Hardtanh, GELU; fp16.

The scale (4.0) and the Hardtanh range ([-1, 1]) differ from KernelBench's 0.5 and [-2, 2]: the
linear outputs here have a standard deviation near 0.3, so with KernelBench's values the Hardtanh
would never act and a kernel that skipped it would pass.
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    """y = gelu(hardtanh(s * (x @ W.T + b)))."""

    def __init__(self, in_features, out_features, scaling_factor, hardtanh_min, hardtanh_max):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, dtype=torch.float16)
        self.scaling_factor = scaling_factor
        self.hardtanh = nn.Hardtanh(min_val=hardtanh_min, max_val=hardtanh_max)
        self.gelu = nn.GELU()

    def forward(self, x):
        x = self.gemm(x)
        x = x * self.scaling_factor
        x = self.hardtanh(x)
        x = self.gelu(x)
        return x


batch_size = 2048
in_features = 8192
out_features = 8192
scaling_factor = 4.0
hardtanh_min = -1.0
hardtanh_max = 1.0


def get_inputs():
    return [torch.rand(batch_size, in_features, dtype=torch.float16)]


def get_init_inputs():
    return [in_features, out_features, scaling_factor, hardtanh_min, hardtanh_max]


def get_cases():
    return [
        {"batch_size": 2048, "in_features": 8192, "out_features": 8192},
        {"batch_size": 1024, "in_features": 8192, "out_features": 8192},
        {"batch_size": 4096, "in_features": 4096, "out_features": 2048},
        {"batch_size": 1234, "in_features": 5678, "out_features": 4321},
        {"batch_size": 8192, "in_features": 1024, "out_features": 4096},
    ]


def get_test_cases():
    return [
        {"batch_size": 64, "in_features": 64, "out_features": 64},
        {"batch_size": 70, "in_features": 33, "out_features": 65},
    ]


def flops(case):
    return 2 * case["batch_size"] * case["in_features"] * case["out_features"]


def bytes(case):
    m, k, n = case["batch_size"], case["in_features"], case["out_features"]
    return 2 * (m * k + n * k + n + m * n)
