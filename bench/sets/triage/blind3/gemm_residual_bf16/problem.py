"""Attention output projection with the residual stream added: out = x @ W^T + residual; bf16."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden, out_features):
        super().__init__()
        self.proj = nn.Linear(hidden, out_features, bias=False, dtype=torch.bfloat16)

    def forward(self, x, residual):
        return self.proj(x) + residual


tokens = 8192
hidden = 4096
out_features = 4096


def get_inputs():
    return [torch.randn(tokens, hidden, dtype=torch.bfloat16),
            torch.randn(tokens, out_features, dtype=torch.bfloat16)]


def get_init_inputs():
    return [hidden, out_features]


def get_cases():
    return [
        {"tokens": 8192, "hidden": 4096, "out_features": 4096},
        {"tokens": 4096, "hidden": 5120, "out_features": 5120},
        {"tokens": 16384, "hidden": 2048, "out_features": 2048},
    ]


def get_test_cases():
    return [{"tokens": 72, "hidden": 96, "out_features": 80}]


def flops(case):
    return 2 * case["tokens"] * case["hidden"] * case["out_features"]
