"""Linear layer without bias (x @ W^T), bf16, as in an attention output projection."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.proj = nn.Linear(in_features, out_features, bias=False, dtype=torch.bfloat16)

    def forward(self, x):
        return self.proj(x)


tokens = 16384
in_features = 4096
out_features = 4096


def get_inputs():
    return [torch.randn(tokens, in_features, dtype=torch.bfloat16)]


def get_init_inputs():
    return [in_features, out_features]


def get_cases():
    return [
        {"tokens": 16384, "in_features": 4096, "out_features": 4096},
        {"tokens": 8192, "in_features": 8192, "out_features": 8192},
        {"tokens": 5000, "in_features": 5120, "out_features": 5120},
    ]


def get_test_cases():
    return [{"tokens": 300, "in_features": 64, "out_features": 130}, {"tokens": 256, "in_features": 128, "out_features": 128}]


def flops(case):
    return 2 * case["tokens"] * case["in_features"] * case["out_features"]
