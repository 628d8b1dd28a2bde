"""Batched matrix product C[b] = A[b] @ B[b], fp16."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.bmm(a, b)


batch = 32
M = 2048
N = 2048
K = 1024


def get_inputs():
    return [torch.randn(batch, M, K, dtype=torch.float16), torch.randn(batch, K, N, dtype=torch.float16)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch": 32, "M": 2048, "N": 2048, "K": 1024},
        {"batch": 128, "M": 1024, "N": 1024, "K": 512},
        {"batch": 8, "M": 4096, "N": 4096, "K": 2048},
    ]


def get_test_cases():
    return [{"batch": 2, "M": 64, "N": 96, "K": 80}, {"batch": 3, "M": 130, "N": 70, "K": 64}]
