"""Bias gradient of a linear layer: db = dy.sum(0) over the token dimension; fp16 dy, fp32 db."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, dy):
        return dy.float().sum(dim=0)


tokens = 32768
features = 8192


def get_inputs():
    return [torch.randn(tokens, features, dtype=torch.float16)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"tokens": 32768, "features": 8192},
        {"tokens": 16384, "features": 16384},
    ]


def get_test_cases():
    return [{"tokens": 100, "features": 40}, {"tokens": 300, "features": 70}]
