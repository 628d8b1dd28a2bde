"""LayerNorm over the feature dimension of a (batch, seq, features) fp32 tensor, short sequences."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.norm = nn.LayerNorm(features)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        return self.norm(x)


batch = 512
seq = 32
features = 1024


def get_inputs():
    return [torch.randn(batch, seq, features)]


def get_init_inputs():
    return [features]


def get_cases():
    return [
        {"batch": 512, "seq": 32, "features": 1024},
        {"batch": 1024, "seq": 16, "features": 2048},
    ]


def get_test_cases():
    return [{"batch": 2, "seq": 3, "features": 100}, {"batch": 3, "seq": 5, "features": 256}]
