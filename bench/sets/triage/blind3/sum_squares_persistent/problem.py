"""Squared L2 norm of a flattened gradient buffer (the first half of gradient clipping); fp32."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, grads):
        return grads.float().pow(2).sum().reshape(1)


numel = 1 << 28


def get_inputs():
    return [torch.randn(numel)]


def get_init_inputs():
    return []


def get_cases():
    return [{"numel": 1 << 28}, {"numel": 123_456_789}, {"numel": 1 << 26}]


def get_test_cases():
    return [{"numel": 50_001}]
