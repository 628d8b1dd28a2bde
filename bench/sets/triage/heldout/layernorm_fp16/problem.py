"""LayerNorm over the hidden dimension, fp16 in and out, fp32 statistics."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.weight = nn.Parameter((1.0 + 0.1 * torch.randn(hidden)).to(torch.float16))
        self.bias = nn.Parameter((0.1 * torch.randn(hidden)).to(torch.float16))
        self.eps = eps

    def forward(self, x):
        return F.layer_norm(x.float(), (x.shape[-1],), self.weight.float(), self.bias.float(), self.eps).to(x.dtype)


tokens = 16384
hidden = 8192
eps = 1e-5


def get_inputs():
    return [torch.randn(tokens, hidden, dtype=torch.float16)]


def get_init_inputs():
    return [hidden, eps]


def get_cases():
    return [
        {"tokens": 16384, "hidden": 8192},
        {"tokens": 32768, "hidden": 4096},
        {"tokens": 8192, "hidden": 12288},
    ]


def get_test_cases():
    return [{"tokens": 3, "hidden": 700}, {"tokens": 4, "hidden": 1500}]
