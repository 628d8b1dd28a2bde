"""Sum over the first dimension of a (rows, cols) fp32 matrix (e.g. a bias gradient)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.sum(dim=0)


rows = 32768
cols = 4096


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"rows": 32768, "cols": 4096},
        {"rows": 16384, "cols": 8192},
        {"rows": 65536, "cols": 1024},
    ]


def get_test_cases():
    return [{"rows": 70, "cols": 5}, {"rows": 300, "cols": 12}]
