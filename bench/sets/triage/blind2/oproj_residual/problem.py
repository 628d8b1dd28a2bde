"""Output projection with the residual connection fused: y = x @ W^T + residual, fp16."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.o_proj = nn.Linear(in_features, out_features, bias=False, dtype=torch.float16)

    def forward(self, x, residual):
        return self.o_proj(x) + residual


tokens = 16384
in_features = 8192
out_features = 8192


def get_inputs():
    return [torch.randn(tokens, in_features, dtype=torch.float16), torch.randn(tokens, out_features, dtype=torch.float16)]


def get_init_inputs():
    return [in_features, out_features]


def get_cases():
    return [
        {"tokens": 16384, "in_features": 8192, "out_features": 8192},
        {"tokens": 32768, "in_features": 4096, "out_features": 4096},
        {"tokens": 10000, "in_features": 6144, "out_features": 6144},
    ]


def get_test_cases():
    return [{"tokens": 100, "in_features": 64, "out_features": 200}, {"tokens": 128, "in_features": 128, "out_features": 128}]


def flops(case):
    return 2 * case["tokens"] * case["in_features"] * case["out_features"]
