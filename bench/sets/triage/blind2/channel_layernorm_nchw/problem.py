"""Channels-first LayerNorm of a ConvNeXt block: normalise each pixel's channel vector of an NCHW
tensor, then scale and shift per channel; fp16 activations."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(channels, dtype=torch.float16).uniform_(0.5, 1.5))
        self.bias = nn.Parameter(torch.empty(channels, dtype=torch.float16).uniform_(-0.5, 0.5))
        self.eps = eps

    def forward(self, x):
        xf = x.float()
        mean = xf.mean(1, keepdim=True)
        var = (xf - mean).pow(2).mean(1, keepdim=True)
        y = (xf - mean) / torch.sqrt(var + self.eps)
        y = y * self.weight.float()[:, None, None] + self.bias.float()[:, None, None]
        return y.to(x.dtype)


batch = 32
channels = 256
height = 56
width = 56
eps = 1e-6


def get_inputs():
    return [torch.randn(batch, channels, height, width, dtype=torch.float16)]


def get_init_inputs():
    return [channels, eps]


def get_cases():
    return [
        {"batch": 32, "channels": 256, "height": 56, "width": 56},
        {"batch": 32, "channels": 512, "height": 28, "width": 28},
        {"batch": 64, "channels": 192, "height": 64, "width": 64},
    ]


def get_test_cases():
    return [{"batch": 2, "channels": 12, "height": 5, "width": 3}, {"batch": 1, "channels": 40, "height": 4, "width": 4}]
