import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        return x + y


n = 1 << 27


def get_inputs():
    return [torch.randn(n), torch.randn(n)]


def get_init_inputs():
    return []


def get_cases():
    return [{"n": 1 << 27}, {"n": 1 << 26}, {"n": 100000000}]
