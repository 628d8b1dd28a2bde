import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(features))

    def forward(self, x):
        return torch.tanh(x + self.bias)


rows = 8192
features = 1000


def get_inputs():
    return [torch.randn(rows, features)]


def get_init_inputs():
    return [features]


def get_cases():
    return [{"rows": 8192, "features": 1000}, {"rows": 4096, "features": 3000}, {"rows": 16384, "features": 768}]
