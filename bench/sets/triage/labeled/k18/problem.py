import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.nn.functional.silu(x)


n = 1 << 24


def get_inputs():
    return [torch.randn(n)]


def get_init_inputs():
    return []


def get_cases():
    return [{"n": 1 << 24}, {"n": 1 << 25}, {"n": 3 << 23}]
