"""RMSNorm over wide hidden sizes (large-model residual stream), fp16 in and out."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.weight = nn.Parameter((1.0 + 0.1 * torch.randn(hidden)).to(torch.float16))
        self.eps = eps

    def forward(self, x):
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return (y * self.weight.float()).to(x.dtype)


tokens = 8192
hidden = 16384
eps = 1e-5


def get_inputs():
    return [torch.randn(tokens, hidden, dtype=torch.float16)]


def get_init_inputs():
    return [hidden, eps]


def get_cases():
    return [
        {"tokens": 8192, "hidden": 16384},
        {"tokens": 16384, "hidden": 8192},
        {"tokens": 4096, "hidden": 12288},
    ]


def get_test_cases():
    return [{"tokens": 3, "hidden": 700}, {"tokens": 4, "hidden": 2100}]
