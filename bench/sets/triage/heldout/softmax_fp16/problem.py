"""Softmax over the last dimension of fp16 attention-score rows (fp32 math)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x.float(), dim=-1).to(x.dtype)


rows = 65536
cols = 4096


def get_inputs():
    return [torch.randn(rows, cols, dtype=torch.float16)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"rows": 65536, "cols": 4096},
        {"rows": 32768, "cols": 8192},
        {"rows": 131072, "cols": 2048},
    ]


def get_test_cases():
    return [{"rows": 3, "cols": 1000}, {"rows": 5, "cols": 2048}]
