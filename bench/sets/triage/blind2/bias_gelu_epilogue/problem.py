"""Per-feature bias add followed by exact GELU on a [tokens, features] fp16 activation."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(features, dtype=torch.float16) * 0.1)

    def forward(self, x):
        return torch.nn.functional.gelu(x.float() + self.bias.float()).to(x.dtype)


tokens = 16384
features = 16384


def get_inputs():
    return [torch.randn(tokens, features, dtype=torch.float16)]


def get_init_inputs():
    return [features]


def get_cases():
    return [{"tokens": 16384, "features": 16384}, {"tokens": 32768, "features": 11008}, {"tokens": 8000, "features": 28672}]


def get_test_cases():
    return [{"tokens": 3, "features": 1000}, {"tokens": 5, "features": 256}]
