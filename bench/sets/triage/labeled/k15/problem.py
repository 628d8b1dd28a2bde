import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1)


rows = 256
cols = 1024


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []


def get_cases():
    return [{"rows": 256, "cols": 1024}, {"rows": 512, "cols": 512}, {"rows": 128, "cols": 2048}]
