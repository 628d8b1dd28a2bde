import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.w = nn.Parameter(torch.randn(dim))
        self.b = nn.Parameter(torch.randn(dim))

    def forward(self, x):
        return torch.relu(x) * self.w + self.b


batch = 64
dim = 1024


def get_inputs():
    return [torch.randn(batch, dim)]


def get_init_inputs():
    return [dim]


def get_cases():
    return [{"batch": 64, "dim": 1024}, {"batch": 32, "dim": 2048}, {"batch": 128, "dim": 512}]
