"""Elementwise add with a scale parameter, in several sizes (tail sizes included)."""
import torch
import torch.nn as nn

N = 65536


class Model(nn.Module):
    def __init__(self, alpha: float):
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + self.alpha * y


def get_inputs():
    return [torch.randn(N), torch.randn(N)]


def get_init_inputs():
    return [0.5]


def get_cases():
    return [{"N": 65536}, {"N": 40000}]


def bytes(case):
    return 3 * 4 * N


def flops(case):
    return 2 * N
