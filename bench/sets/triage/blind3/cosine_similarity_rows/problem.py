"""Row-wise cosine similarity between two batches of long fp32 feature vectors."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.nn.functional.cosine_similarity(a, b, dim=1, eps=1e-8)


rows = 8192
dim = 16384


def get_inputs():
    return [torch.randn(rows, dim), torch.randn(rows, dim)]


def get_init_inputs():
    return []


def get_cases():
    return [{"rows": 8192, "dim": 16384}, {"rows": 4096, "dim": 32768}, {"rows": 32768, "dim": 4096}]


def get_test_cases():
    return [{"rows": 3, "dim": 3000}]
