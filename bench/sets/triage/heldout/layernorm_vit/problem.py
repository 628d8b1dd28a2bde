"""LayerNorm over a small hidden dimension (ViT/BERT-base widths) for many tokens, fp16."""
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


tokens = 262144
hidden = 768
eps = 1e-6


def get_inputs():
    return [torch.randn(tokens, hidden, dtype=torch.float16)]


def get_init_inputs():
    return [hidden, eps]


def get_cases():
    return [
        {"tokens": 262144, "hidden": 768},
        {"tokens": 131072, "hidden": 1024},
        {"tokens": 524288, "hidden": 384},
    ]


def get_test_cases():
    return [{"tokens": 7, "hidden": 96}, {"tokens": 20, "hidden": 200}]
