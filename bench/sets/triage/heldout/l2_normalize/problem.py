"""L2-normalise each row of an fp32 embedding matrix (F.normalize along the last dimension)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.normalize(x, p=2.0, dim=-1, eps=1e-12)


rows = 65536
dim = 4096


def get_inputs():
    return [torch.randn(rows, dim)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"rows": 65536, "dim": 4096},
        {"rows": 262144, "dim": 1024},
    ]


def get_test_cases():
    return [{"rows": 3, "dim": 300}, {"rows": 5, "dim": 1100}]
