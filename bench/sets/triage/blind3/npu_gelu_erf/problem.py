"""Exact (erf) GELU on a large fp32 activation, Ascend."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.nn.functional.gelu(x)


tokens = 8192
width = 11008


def get_inputs():
    return [torch.randn(tokens, width)]


def get_init_inputs():
    return []


def get_cases():
    return [{"tokens": 8192, "width": 11008}, {"tokens": 4096, "width": 13824}, {"tokens": 16384, "width": 4096}]


def get_test_cases():
    return [{"tokens": 4, "width": 1536}]
