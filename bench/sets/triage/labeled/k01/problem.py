import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        return self.alpha * x + y


n = 1 << 22
alpha = 0.5


def get_inputs():
    return [torch.randn(n), torch.randn(n)]


def get_init_inputs():
    return [alpha]


def get_cases():
    return [{"n": 1 << 22}, {"n": 3 << 21}, {"n": 1 << 23}]
