import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return (x * 0.5).t().contiguous()


M = 8192
N = 8192


def get_inputs():
    return [torch.randn(M, N)]


def get_init_inputs():
    return []


def get_cases():
    return [{"M": 8192, "N": 8192}, {"M": 4096, "N": 16384}, {"M": 16384, "N": 4096}]
