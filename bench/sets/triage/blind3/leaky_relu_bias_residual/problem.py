"""Bias add, LeakyReLU and residual add on an fp16 activation, as between two convolutions of a
channels-last network flattened to (pixels, channels)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(channels, dtype=torch.float16))

    def forward(self, x, skip):
        return torch.nn.functional.leaky_relu(x + self.bias, 0.01) + skip


pixels = 16384
channels = 4096


def get_inputs():
    return [torch.randn(pixels, channels, dtype=torch.float16), torch.randn(pixels, channels, dtype=torch.float16)]


def get_init_inputs():
    return [channels]


def get_cases():
    return [
        {"pixels": 16384, "channels": 4096},
        {"pixels": 8192, "channels": 5120},
        {"pixels": 4096, "channels": 12288},
    ]


def get_test_cases():
    return [{"pixels": 3, "channels": 2560}]
