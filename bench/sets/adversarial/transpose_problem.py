"""Transpose of a matrix into a fresh contiguous tensor."""
import torch
import torch.nn as nn

M, N = 300, 257


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.t().contiguous()


def get_inputs():
    return [torch.randn(M, N)]


def get_init_inputs():
    return []


def get_cases():
    return [{"M": 300, "N": 257}, {"M": 64, "N": 1000}]
