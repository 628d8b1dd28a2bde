"""Residual add then RMSNorm, bf16: h = x + residual; returns (rmsnorm(h) * w, h)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(hidden, dtype=torch.bfloat16).uniform_(0.5, 1.5))
        self.eps = eps

    def forward(self, x, residual):
        h = (x.float() + residual.float()).to(x.dtype)
        hf = h.float()
        y = hf * torch.rsqrt(hf.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight.float()
        return y.to(x.dtype), h


tokens = 32768
hidden = 4096
eps = 1e-5


def get_inputs():
    return [torch.randn(tokens, hidden, dtype=torch.bfloat16), torch.randn(tokens, hidden, dtype=torch.bfloat16)]


def get_init_inputs():
    return [hidden, eps]


def get_cases():
    return [{"tokens": 32768, "hidden": 4096}, {"tokens": 16384, "hidden": 8192}, {"tokens": 20000, "hidden": 5120}]


def get_test_cases():
    return [{"tokens": 5, "hidden": 300}, {"tokens": 3, "hidden": 1024}]
