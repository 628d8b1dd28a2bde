"""Global L2 norm of a flat bf16 gradient buffer (for gradient clipping); fp32 scalar result."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, grads):
        return grads.float().pow(2).sum().sqrt()


numel = 268435456


def get_inputs():
    return [torch.randn(numel, dtype=torch.bfloat16) * 1e-2]


def get_init_inputs():
    return []


def get_cases():
    return [{"numel": 268435456}, {"numel": 100000000}, {"numel": 536870912}]


def get_test_cases():
    return [{"numel": 10000}, {"numel": 65536}]
