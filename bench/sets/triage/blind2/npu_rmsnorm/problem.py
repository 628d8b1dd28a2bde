"""RMSNorm over the hidden axis, fp16 activations, for an Ascend NPU (inputs are moved to the npu
device by the harness)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(hidden, dtype=torch.float16).uniform_(0.5, 1.5))
        self.eps = eps

    def forward(self, x):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight.float()).to(x.dtype)


tokens = 16384
hidden = 4096
eps = 1e-6


def get_inputs():
    return [torch.randn(tokens, hidden, dtype=torch.float16)]


def get_init_inputs():
    return [hidden, eps]


def get_cases():
    return [{"tokens": 16384, "hidden": 4096}, {"tokens": 8192, "hidden": 3584}, {"tokens": 32768, "hidden": 2048}]


def get_test_cases():
    return [{"tokens": 4, "hidden": 1000}, {"tokens": 3, "hidden": 512}]
