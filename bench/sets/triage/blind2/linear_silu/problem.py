"""Linear layer with bias followed by SiLU, fp16 (an MLP up-projection with a non-gated activation)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features, dtype=torch.float16)

    def forward(self, x):
        return torch.nn.functional.silu(self.fc(x))


tokens = 8192
in_features = 4096
out_features = 16384


def get_inputs():
    return [torch.randn(tokens, in_features, dtype=torch.float16)]


def get_init_inputs():
    return [in_features, out_features]


def get_cases():
    return [
        {"tokens": 8192, "in_features": 4096, "out_features": 16384},
        {"tokens": 16384, "in_features": 2048, "out_features": 8192},
        {"tokens": 5000, "in_features": 5120, "out_features": 20480},
    ]


def get_test_cases():
    return [{"tokens": 70, "in_features": 64, "out_features": 96}, {"tokens": 64, "in_features": 128, "out_features": 128}]


def flops(case):
    return 2 * case["tokens"] * case["in_features"] * case["out_features"]
