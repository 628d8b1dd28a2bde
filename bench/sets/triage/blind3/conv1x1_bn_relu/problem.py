"""Pointwise (1x1) convolution + BatchNorm (inference statistics) + ReLU on a channels-last fp16
feature map (N, H, W, C), as in the expansion layers of a MobileNet/ResNet bottleneck."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 1, bias=False, dtype=torch.float16)
        self.bn = nn.BatchNorm2d(cout, dtype=torch.float16)
        with torch.no_grad():
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 2.0)
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-0.5, 0.5)
        self.eval()

    def forward(self, x):
        y = self.conv(x.permute(0, 3, 1, 2))
        return torch.relu(self.bn(y)).permute(0, 2, 3, 1).contiguous()


batch = 64
height = 56
width = 56
cin = 64
cout = 256


def get_inputs():
    return [torch.randn(batch, height, width, cin, dtype=torch.float16)]


def get_init_inputs():
    return [cin, cout]


def get_cases():
    return [
        {"batch": 64, "height": 56, "width": 56, "cin": 64, "cout": 256},
        {"batch": 64, "height": 28, "width": 28, "cin": 128, "cout": 512},
        {"batch": 64, "height": 14, "width": 14, "cin": 256, "cout": 1024},
    ]


def get_test_cases():
    return [{"batch": 1, "height": 5, "width": 6, "cin": 32, "cout": 64}]


def flops(case):
    return 2 * case["batch"] * case["height"] * case["width"] * case["cin"] * case["cout"]
