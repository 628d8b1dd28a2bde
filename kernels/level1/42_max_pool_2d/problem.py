"""KernelBench level 1, problem 42: 2D max pooling, in fp32.

The cases vary the window (kernel size, stride, padding, dilation) as well as the tensor shape.
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    """y = MaxPool2d(kernel_size, stride, padding, dilation)(x)."""

    def __init__(self, kernel_size: int, stride: int, padding: int, dilation: int):
        super().__init__()
        self.maxpool = nn.MaxPool2d(kernel_size=kernel_size, stride=stride, padding=padding,
                                    dilation=dilation)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.maxpool(x)


batch_size = 32
channels = 64
height = 256
width = 256
kernel_size = 4
stride = 1
padding = 1
dilation = 1


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [kernel_size, stride, padding, dilation]


def get_cases():
    return [
        {"batch_size": 32, "channels": 64, "height": 256, "width": 256,
         "kernel_size": 4, "stride": 1, "padding": 1, "dilation": 1},
        {"batch_size": 16, "channels": 64, "height": 224, "width": 224,
         "kernel_size": 3, "stride": 2, "padding": 1, "dilation": 1},
        {"batch_size": 32, "channels": 32, "height": 255, "width": 257,
         "kernel_size": 2, "stride": 2, "padding": 0, "dilation": 1},
        {"batch_size": 8, "channels": 128, "height": 192, "width": 192,
         "kernel_size": 3, "stride": 1, "padding": 1, "dilation": 2},
        {"batch_size": 16, "channels": 96, "height": 129, "width": 250,
         "kernel_size": 5, "stride": 3, "padding": 2, "dilation": 1},
    ]


def get_test_cases():
    return [
        {"batch_size": 2, "channels": 3, "height": 16, "width": 16,
         "kernel_size": 4, "stride": 1, "padding": 1, "dilation": 1},
        {"batch_size": 1, "channels": 4, "height": 19, "width": 23,
         "kernel_size": 3, "stride": 2, "padding": 1, "dilation": 2},
    ]


def _out_size(size, case):
    k, s, p, d = case["kernel_size"], case["stride"], case["padding"], case["dilation"]
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def flops(case):
    n_out = (case["batch_size"] * case["channels"]
             * _out_size(case["height"], case) * _out_size(case["width"], case))
    return n_out * case["kernel_size"] ** 2


def bytes(case):
    n_in = case["batch_size"] * case["channels"] * case["height"] * case["width"]
    n_out = (case["batch_size"] * case["channels"]
             * _out_size(case["height"], case) * _out_size(case["width"], case))
    return 4 * (n_in + n_out)
