import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.max(dim=0).values


rows = 4096
cols = 4096


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []


def get_cases():
    return [{"rows": 4096, "cols": 4096}, {"rows": 8192, "cols": 2048}, {"rows": 2048, "cols": 8192}]
