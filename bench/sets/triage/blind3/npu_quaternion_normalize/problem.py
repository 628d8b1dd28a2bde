"""Normalise a large batch of fp32 quaternions (N, 4) to unit length (pose / rotation heads)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q):
        return q / q.norm(dim=-1, keepdim=True).clamp_min(1e-12)


count = 1 << 22


def get_inputs():
    return [torch.randn(count, 4)]


def get_init_inputs():
    return []


def get_cases():
    return [{"count": 1 << 22}, {"count": 1 << 20}, {"count": 3 << 21}]


def get_test_cases():
    return [{"count": 3 * 1024}]
