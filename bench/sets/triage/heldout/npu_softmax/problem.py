"""Row softmax of fp32 scores with wide rows, on an Ascend NPU."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1)


rows = 4096
cols = 32768


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []


def get_cases():
    return [{"rows": 4096, "cols": 32768}, {"rows": 8192, "cols": 16384}]


def get_test_cases():
    return [{"rows": 3, "cols": 1000}, {"rows": 4, "cols": 2048}]
