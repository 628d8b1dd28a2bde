import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, points, offset):
        return points * 2.0 + offset


n = 1 << 20


def get_inputs():
    return [torch.randn(n, 3), torch.randn(3)]


def get_init_inputs():
    return []


def get_cases():
    return [{"n": 1 << 20}, {"n": 1 << 21}, {"n": 1 << 19}]
