import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.bmm(a, b)


batch = 4096
M = 32
K = 32
N = 32


def get_inputs():
    return [torch.randn(batch, M, K), torch.randn(batch, K, N)]


def get_init_inputs():
    return []


def get_cases():
    return [{"batch": 4096}, {"batch": 8192}, {"batch": 16384}]
