"""KernelBench level 2, problem 18: linear layer, then sum over the features followed by max, mean
and two logsumexps over the resulting size-1 dimension; fp16. Output shape (batch_size, 1).

The cases are sized so that the roofline floor of the least work a correct forward needs
(``flops``, kernels/README.md) stays above 20 us."""
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
        {"batch_size": 8192, "in_features": 4096, "out_features": 4096},
        {"batch_size": 4000, "in_features": 6000, "out_features": 5000},
        {"batch_size": 16384, "in_features": 2048, "out_features": 8191},
        {"batch_size": 512, "in_features": 16384, "out_features": 8192},
    ]


def get_test_cases():
    return [
        {"batch_size": 64, "in_features": 64, "out_features": 128},
        {"batch_size": 50, "in_features": 80, "out_features": 150},
    ]


def flops(case):
    """The least work a correct forward needs, less than the matmul's 2 M N K (kernels/README.md)."""
    m, k, n = case["batch_size"], case["in_features"], case["out_features"]
    return n * k + n + 2 * m * k


def bytes(case):
    m, k, n = case["batch_size"], case["in_features"], case["out_features"]
    return 2 * (m * k + n * k + n + m)
