import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, x):
        return a @ x


M = 4096
K = 32768


def get_inputs():
    return [torch.randn(M, K), torch.randn(K)]


def get_init_inputs():
    return []


def get_cases():
    return [{"M": 4096, "K": 32768}, {"M": 8192, "K": 16384}, {"M": 2048, "K": 65536}]
