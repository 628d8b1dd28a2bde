"""2x nearest-neighbour upsampling of an NCHW fp16 feature map (decoder / FPN upsample)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.interpolate(x, scale_factor=2, mode="nearest")


batch = 16
channels = 256
height = 128
width = 128


def get_inputs():
    return [torch.randn(batch, channels, height, width, dtype=torch.float16)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch": 16, "channels": 256, "height": 128, "width": 128},
        {"batch": 8, "channels": 128, "height": 256, "width": 256},
    ]


def get_test_cases():
    return [{"batch": 1, "channels": 3, "height": 5, "width": 7}, {"batch": 2, "channels": 2, "height": 8, "width": 6}]
