"""Residual add followed by RMSNorm (the pre-norm of a decoder layer); returns the normalised
activations and the updated residual stream, both bf16."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(hidden, dtype=torch.bfloat16).uniform_(0.5, 1.5))
        self.eps = eps

    def forward(self, x, residual):
        r = x.float() + residual.float()
        y = r * torch.rsqrt(r.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight.float()
        return y.to(x.dtype), r.to(x.dtype)


tokens = 16384
hidden = 4096
eps = 1e-6


def get_inputs():
    return [torch.randn(tokens, hidden, dtype=torch.bfloat16), torch.randn(tokens, hidden, dtype=torch.bfloat16)]


def get_init_inputs():
    return [hidden, eps]


def get_cases():
    return [
        {"tokens": 16384, "hidden": 4096},
        {"tokens": 32768, "hidden": 8192},
        {"tokens": 8000, "hidden": 5120},
    ]


def get_test_cases():
    return [
        {"tokens": 6, "hidden": 320},
        {"tokens": 4, "hidden": 1024},
    ]
