"""3x3 convolution, stride 1, padding 1, no bias, on channels-last (NHWC) fp16 activations with
OHWI weights; output NHWC. (The reference permutes to NCHW for torch's conv2d.)"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_channels, 3, 3, in_channels, dtype=torch.float16) * (9 * in_channels) ** -0.5)

    def forward(self, x):
        w = self.weight.permute(0, 3, 1, 2)
        y = torch.nn.functional.conv2d(x.permute(0, 3, 1, 2), w, padding=1)
        return y.permute(0, 2, 3, 1).contiguous()


batch = 32
height = 56
width = 56
in_channels = 256
out_channels = 256


def get_inputs():
    return [torch.randn(batch, height, width, in_channels, dtype=torch.float16)]


def get_init_inputs():
    return [in_channels, out_channels]


def get_cases():
    return [
        {"batch": 32, "height": 56, "width": 56, "in_channels": 256, "out_channels": 256},
        {"batch": 64, "height": 28, "width": 28, "in_channels": 512, "out_channels": 512},
        {"batch": 16, "height": 112, "width": 112, "in_channels": 128, "out_channels": 128},
    ]


def get_test_cases():
    return [{"batch": 2, "height": 5, "width": 6, "in_channels": 16, "out_channels": 32},
            {"batch": 1, "height": 8, "width": 8, "in_channels": 32, "out_channels": 16}]


def flops(case):
    return 2 * case["batch"] * case["height"] * case["width"] * case["out_channels"] * 9 * case["in_channels"]
