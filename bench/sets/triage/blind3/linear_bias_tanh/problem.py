"""Pooler/projection layer: Linear with bias followed by tanh over a large batch of tokens; bf16."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.dense = nn.Linear(in_features, out_features, dtype=torch.bfloat16)

    def forward(self, x):
        return torch.tanh(self.dense(x).float()).to(x.dtype)


tokens = 16384
in_features = 8192
out_features = 8192


def get_inputs():
    return [torch.randn(tokens, in_features, dtype=torch.bfloat16) * 0.1]


def get_init_inputs():
    return [in_features, out_features]


def get_cases():
    return [
        {"tokens": 16384, "in_features": 8192, "out_features": 8192},
        {"tokens": 32768, "in_features": 4096, "out_features": 11008},
        {"tokens": 8192, "in_features": 12288, "out_features": 12288},
    ]


def get_test_cases():
    return [{"tokens": 70, "in_features": 64, "out_features": 136}]


def flops(case):
    return 2 * case["tokens"] * case["in_features"] * case["out_features"]
