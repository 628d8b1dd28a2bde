"""Per-channel bias add and SiLU on an NCHW activation (the epilogue of a bias-free convolution), fp32."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.bias = nn.Parameter(0.5 * torch.randn(channels))

    def forward(self, x):
        return F.silu(x + self.bias.view(1, -1, 1, 1))


batch = 64
channels = 256
height = 56
width = 56


def get_inputs():
    return [torch.randn(batch, channels, height, width)]


def get_init_inputs():
    return [channels]


def get_cases():
    return [
        {"batch": 64, "channels": 256, "height": 56, "width": 56},
        {"batch": 32, "channels": 512, "height": 64, "width": 64},
        {"batch": 128, "channels": 128, "height": 28, "width": 28},
    ]


def get_test_cases():
    return [{"batch": 2, "channels": 3, "height": 5, "width": 7}, {"batch": 1, "channels": 4, "height": 9, "width": 9}]
