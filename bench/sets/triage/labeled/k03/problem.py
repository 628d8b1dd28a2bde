import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim, elementwise_affine=False)

    def forward(self, x):
        return self.norm(x)


rows = 2048
dim = 32768


def get_inputs():
    return [torch.randn(rows, dim)]


def get_init_inputs():
    return [dim]


def get_cases():
    return [{"rows": 2048, "dim": 32768}, {"rows": 1024, "dim": 65536}, {"rows": 4096, "dim": 16384}]
