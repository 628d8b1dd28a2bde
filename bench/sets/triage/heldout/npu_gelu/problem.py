"""Exact (erf) GELU of a large fp32 activation tensor, on an Ascend NPU."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.gelu(x)


numel = 33554432


def get_inputs():
    return [torch.randn(numel)]


def get_init_inputs():
    return []


def get_cases():
    return [{"numel": 33554432}, {"numel": 50000000}]


def get_test_cases():
    return [{"numel": 3000}, {"numel": 5000}]
