"""Row softmax over wide fp32 rows (attention probabilities of long sequences) on Ascend."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1)


rows = 4096
cols = 16384


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []


def get_cases():
    return [{"rows": 4096, "cols": 16384}, {"rows": 2048, "cols": 32768}, {"rows": 8192, "cols": 16384}]


def get_test_cases():
    return [{"rows": 43, "cols": 256}]
