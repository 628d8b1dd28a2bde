"""Softmax over the last dimension of a (rows, cols) fp32 matrix, wide rows."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


rows = 4096
cols = 32768


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"rows": 4096, "cols": 32768},
        {"rows": 2048, "cols": 65536},
        {"rows": 1024, "cols": 131072},
    ]


def get_test_cases():
    return [{"rows": 3, "cols": 1000}, {"rows": 5, "cols": 4096}]
