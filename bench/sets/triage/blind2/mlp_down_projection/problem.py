"""Linear layer with bias (x @ W^T + b), bf16, as in an MLP down-projection."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.down = nn.Linear(in_features, out_features, dtype=torch.bfloat16)

    def forward(self, x):
        return self.down(x)


tokens = 16384
in_features = 14336
out_features = 4096


def get_inputs():
    return [torch.randn(tokens, in_features, dtype=torch.bfloat16)]


def get_init_inputs():
    return [in_features, out_features]


def get_cases():
    return [
        {"tokens": 16384, "in_features": 14336, "out_features": 4096},
        {"tokens": 8192, "in_features": 28672, "out_features": 8192},
        {"tokens": 12000, "in_features": 13824, "out_features": 5120},
    ]


def get_test_cases():
    return [{"tokens": 100, "in_features": 96, "out_features": 130}, {"tokens": 128, "in_features": 128, "out_features": 64}]


def flops(case):
    return 2 * case["tokens"] * case["in_features"] * case["out_features"]
