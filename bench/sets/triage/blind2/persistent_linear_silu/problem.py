"""Linear layer with the weight stored [in, out] (x @ W + b) followed by SiLU; fp16."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(in_features, out_features, dtype=torch.float16) * in_features ** -0.5)
        self.bias = nn.Parameter(torch.randn(out_features, dtype=torch.float16) * 0.1)

    def forward(self, x):
        return torch.nn.functional.silu(x @ self.weight + self.bias)


tokens = 8192
in_features = 8192
out_features = 8192


def get_inputs():
    return [torch.randn(tokens, in_features, dtype=torch.float16)]


def get_init_inputs():
    return [in_features, out_features]


def get_cases():
    return [
        {"tokens": 8192, "in_features": 8192, "out_features": 8192},
        {"tokens": 16384, "in_features": 4096, "out_features": 11008},
        {"tokens": 5000, "in_features": 6144, "out_features": 4096},
    ]


def get_test_cases():
    return [{"tokens": 100, "in_features": 96, "out_features": 80}, {"tokens": 128, "in_features": 64, "out_features": 128}]


def flops(case):
    return 2 * case["tokens"] * case["in_features"] * case["out_features"]
