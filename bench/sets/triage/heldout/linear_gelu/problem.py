"""Transformer MLP up-projection with bias and GELU (tanh approximation), fp16."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features, dtype=torch.float16)

    def forward(self, x):
        return F.gelu(self.fc(x), approximate="tanh")


batch_size = 8192
in_features = 4096
out_features = 16384


def get_inputs():
    return [torch.randn(batch_size, in_features, dtype=torch.float16)]


def get_init_inputs():
    return [in_features, out_features]


def get_cases():
    return [
        {"batch_size": 8192, "in_features": 4096, "out_features": 16384},
        {"batch_size": 16384, "in_features": 2048, "out_features": 8192},
        {"batch_size": 4096, "in_features": 5120, "out_features": 20480},
    ]


def get_test_cases():
    return [
        {"batch_size": 64, "in_features": 96, "out_features": 80},
        {"batch_size": 130, "in_features": 200, "out_features": 70},
    ]
