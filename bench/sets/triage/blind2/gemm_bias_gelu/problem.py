"""Linear layer followed by exact (erf) GELU, as in a transformer MLP up-projection; bf16."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features, dtype=torch.bfloat16)

    def forward(self, x):
        return torch.nn.functional.gelu(self.fc(x))


tokens = 8192
in_features = 4096
out_features = 11008


def get_inputs():
    return [torch.randn(tokens, in_features, dtype=torch.bfloat16)]


def get_init_inputs():
    return [in_features, out_features]


def get_cases():
    return [
        {"tokens": 8192, "in_features": 4096, "out_features": 11008},
        {"tokens": 4096, "in_features": 8192, "out_features": 28672},
        {"tokens": 3000, "in_features": 5120, "out_features": 13824},
    ]


def get_test_cases():
    return [
        {"tokens": 40, "in_features": 96, "out_features": 80},
        {"tokens": 64, "in_features": 128, "out_features": 128},
    ]


def flops(case):
    return 2 * case["tokens"] * case["in_features"] * case["out_features"]
