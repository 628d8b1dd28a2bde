"""Softmax over the last axis with a sampling temperature, e.g. over the classes of a detection
head or the keys of an attention map; fp32."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, temperature):
        super().__init__()
        self.temperature = temperature

    def forward(self, logits):
        return torch.softmax(logits / self.temperature, dim=-1)


rows = 32768
cols = 2048
temperature = 0.7


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return [temperature]


def get_cases():
    return [
        {"rows": 32768, "cols": 2048},
        {"rows": 65536, "cols": 1024},
        {"rows": 16384, "cols": 4096},
    ]


def get_test_cases():
    return [{"rows": 5, "cols": 768}]
