"""Residual add followed by RMSNorm, fp16 (decoder pre-norm)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.weight = nn.Parameter((1.0 + 0.1 * torch.randn(hidden)).to(torch.float16))
        self.eps = eps

    def forward(self, x, residual):
        h = x.float() + residual.float()
        h = h * torch.rsqrt(h.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return (h * self.weight.float()).to(x.dtype)


tokens = 16384
hidden = 4096
eps = 1e-6


def get_inputs():
    return [torch.randn(tokens, hidden, dtype=torch.float16), torch.randn(tokens, hidden, dtype=torch.float16)]


def get_init_inputs():
    return [hidden, eps]


def get_cases():
    return [
        {"tokens": 16384, "hidden": 4096},
        {"tokens": 8192, "hidden": 8192},
        {"tokens": 32768, "hidden": 5120},
    ]


def get_test_cases():
    return [{"tokens": 3, "hidden": 96}, {"tokens": 5, "hidden": 320}]
