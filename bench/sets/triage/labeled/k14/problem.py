import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(dim))
        self.shift = nn.Parameter(torch.randn(dim))

    def forward(self, x):
        return torch.sigmoid(x * self.scale) + self.shift


rows = 8192
dim = 4096


def get_inputs():
    return [torch.randn(rows, dim)]


def get_init_inputs():
    return [dim]


def get_cases():
    return [{"rows": 8192, "dim": 4096}, {"rows": 16384, "dim": 2048}, {"rows": 4096, "dim": 8192}]
