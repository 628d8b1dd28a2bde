"""Global average pooling of a channels-last (N, H, W, C) fp16 feature map to (N, C), as before the
classifier of a convolutional network."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.float().mean(dim=(1, 2)).to(x.dtype)


batch = 64
height = 56
width = 56
channels = 256


def get_inputs():
    return [torch.randn(batch, height, width, channels, dtype=torch.float16)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch": 64, "height": 56, "width": 56, "channels": 256},
        {"batch": 128, "height": 28, "width": 28, "channels": 512},
        {"batch": 256, "height": 14, "width": 14, "channels": 1024},
    ]


def get_test_cases():
    return [{"batch": 2, "height": 5, "width": 7, "channels": 16}]
