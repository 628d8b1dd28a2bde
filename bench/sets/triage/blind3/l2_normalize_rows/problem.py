"""L2-normalise each embedding vector (retrieval / contrastive-learning heads); fp32."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.nn.functional.normalize(x, p=2.0, dim=-1, eps=1e-12)


rows = 65536
dim = 1024


def get_inputs():
    return [torch.randn(rows, dim)]


def get_init_inputs():
    return []


def get_cases():
    return [{"rows": 65536, "dim": 1024}, {"rows": 32768, "dim": 2048}, {"rows": 16384, "dim": 4096}]


def get_test_cases():
    return [{"rows": 4, "dim": 1000}]
