import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return a @ b


M = 2048
N = 2048
K = 2048


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []


def get_cases():
    return [{"M": 2048, "N": 2048, "K": 2048}, {"M": 4096, "N": 1024, "K": 2048}, {"M": 1024, "N": 4096, "K": 1024}]
