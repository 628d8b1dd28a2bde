import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.clamp(x, min=-1.0, max=1.0)


n = 1 << 20


def get_inputs():
    return [torch.randn(n)]


def get_init_inputs():
    return []


def get_cases():
    return [{"n": 1 << 18}, {"n": 1 << 21}, {"n": 1 << 24}, {"n": 1 << 26}]
