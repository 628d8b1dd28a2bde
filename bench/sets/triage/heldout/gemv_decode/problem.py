"""Single-token decode projection: y = x @ W.T for one fp16 activation row and a large weight."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.proj = nn.Linear(in_features, out_features, bias=False, dtype=torch.float16)

    def forward(self, x):
        return self.proj(x)


in_features = 8192
out_features = 28672


def get_inputs():
    return [torch.randn(1, in_features, dtype=torch.float16)]


def get_init_inputs():
    return [in_features, out_features]


def get_cases():
    return [
        {"in_features": 8192, "out_features": 28672},
        {"in_features": 28672, "out_features": 8192},
        {"in_features": 8192, "out_features": 10240},
    ]


def get_test_cases():
    return [{"in_features": 300, "out_features": 70}, {"in_features": 512, "out_features": 130}]


def bytes(case):
    return 2 * (in_features * out_features + in_features + out_features)
