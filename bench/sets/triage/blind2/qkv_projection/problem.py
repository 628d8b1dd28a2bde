"""Linear layer without bias (x @ W^T), fp16, as in the fused QKV projection of an attention block."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.qkv = nn.Linear(in_features, out_features, bias=False, dtype=torch.float16)

    def forward(self, x):
        return self.qkv(x)


tokens = 16384
in_features = 4096
out_features = 6144


def get_inputs():
    return [torch.randn(tokens, in_features, dtype=torch.float16)]


def get_init_inputs():
    return [in_features, out_features]


def get_cases():
    return [
        {"tokens": 16384, "in_features": 4096, "out_features": 6144},
        {"tokens": 8192, "in_features": 8192, "out_features": 10240},
        {"tokens": 6000, "in_features": 5120, "out_features": 7168},
    ]


def get_test_cases():
    return [{"tokens": 130, "in_features": 64, "out_features": 200}, {"tokens": 128, "in_features": 128, "out_features": 128}]


def flops(case):
    return 2 * case["tokens"] * case["in_features"] * case["out_features"]
