"""KernelBench level 2, problem 33: linear layer, per-feature scale, BatchNorm1d; fp16.

As in KernelBench, the model is in training mode, so BatchNorm normalises with the statistics of
the batch itself (biased variance over the batch dimension). The BatchNorm affine parameters are
drawn away from their 1/0 defaults so that a kernel that skips them is caught.
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    """y = batch_norm((x @ W.T + b) * scale)."""

    def __init__(self, in_features, out_features, scale_shape, eps=1e-5, momentum=0.1):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, dtype=torch.float16)
        self.scale = nn.Parameter(torch.randn(scale_shape, dtype=torch.float16))
        self.bn = nn.BatchNorm1d(out_features, eps=eps, momentum=momentum, dtype=torch.float16)
        with torch.no_grad():
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        x = self.gemm(x)
        x = x * self.scale
        x = self.bn(x)
        return x


batch_size = 1024
in_features = 8192
out_features = 8192


def get_inputs():
    return [torch.rand(batch_size, in_features, dtype=torch.float16)]


def get_init_inputs():
    return [in_features, out_features, (out_features,)]


def get_cases():
    return [
        {"batch_size": 1024, "in_features": 8192, "out_features": 8192},
        {"batch_size": 2048, "in_features": 4096, "out_features": 4096},
        {"batch_size": 8192, "in_features": 2048, "out_features": 2048},
        {"batch_size": 1001, "in_features": 7000, "out_features": 5000},
        {"batch_size": 3000, "in_features": 3000, "out_features": 3000},
    ]


def get_test_cases():
    return [
        {"batch_size": 64, "in_features": 64, "out_features": 64},
        {"batch_size": 70, "in_features": 50, "out_features": 100},
    ]


def flops(case):
    return 2 * case["batch_size"] * case["in_features"] * case["out_features"]


def bytes(case):
    m, k, n = case["batch_size"], case["in_features"], case["out_features"]
    return 2 * (m * k + n * k + 4 * n + m * n)
