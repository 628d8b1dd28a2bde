"""out = relu(x * alpha) + y over a flat vector, in two sizes."""
import torch
import torch.nn as nn

N = 1024


class Model(nn.Module):
    def __init__(self, alpha: float):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        return torch.relu(x * self.alpha) + y


def get_inputs():
    return [torch.randn(N), torch.randn(N)]


def get_init_inputs():
    return [0.5]


def get_cases():
    return [{"N": 1024}, {"N": 4096}]


def flops(case):
    return 3 * N


def bytes(case):
    return 3 * 4 * N
