"""LayerNorm with weight and bias over the hidden size of a bf16 activation."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(hidden, eps=1e-5, dtype=torch.bfloat16)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.2, 0.2)

    def forward(self, x):
        return self.norm(x)


tokens = 16384
hidden = 4096


def get_inputs():
    return [torch.randn(tokens, hidden, dtype=torch.bfloat16)]


def get_init_inputs():
    return [hidden]


def get_cases():
    return [
        {"tokens": 16384, "hidden": 4096},
        {"tokens": 8192, "hidden": 8192},
        {"tokens": 32768, "hidden": 2048},
    ]


def get_test_cases():
    return [{"tokens": 6, "hidden": 768}]
