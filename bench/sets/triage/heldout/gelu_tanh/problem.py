"""GELU (tanh approximation) of a large fp16 activation tensor."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.gelu(x.float(), approximate="tanh").to(x.dtype)


tokens = 16384
hidden = 16384


def get_inputs():
    return [torch.randn(tokens, hidden, dtype=torch.float16)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"tokens": 16384, "hidden": 16384},
        {"tokens": 8192, "hidden": 28672},
        {"tokens": 65537, "hidden": 4096},
    ]


def get_test_cases():
    return [{"tokens": 3, "hidden": 1000}, {"tokens": 7, "hidden": 999}]
