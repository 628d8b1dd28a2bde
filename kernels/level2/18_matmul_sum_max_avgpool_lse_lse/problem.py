"""KernelBench level 2, problem 18: linear layer, then sum over the features followed by max, mean
and two logsumexps over the resulting size-1 dimension; fp16. Output shape (batch_size, 1)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """Linear -> sum(dim=1) -> max -> mean -> logsumexp -> logsumexp (all keepdim)."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, dtype=torch.float16)

    def forward(self, x):
        x = self.linear(x)
        x = torch.sum(x, dim=1, keepdim=True)
        x = torch.max(x, dim=1, keepdim=True)[0]
        x = torch.mean(x, dim=1, keepdim=True)
        x = torch.logsumexp(x, dim=1, keepdim=True)
        x = torch.logsumexp(x, dim=1, keepdim=True)
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
        {"batch_size": 4096, "in_features": 2048, "out_features": 4096},
        {"batch_size": 2000, "in_features": 6000, "out_features": 3000},
        {"batch_size": 8192, "in_features": 1024, "out_features": 8191},
        {"batch_size": 512, "in_features": 16384, "out_features": 8192},
    ]


def get_test_cases():
    return [
        {"batch_size": 64, "in_features": 64, "out_features": 128},
        {"batch_size": 50, "in_features": 80, "out_features": 150},
    ]


def flops(case):
    return 2 * case["batch_size"] * case["in_features"] * case["out_features"]


def bytes(case):
    m, k, n = case["batch_size"], case["in_features"], case["out_features"]
    return 2 * (m * k + n * k + n + m)
