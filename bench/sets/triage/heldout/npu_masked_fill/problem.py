"""Constrained decoding: push disallowed vocabulary logits to -10000 (masked_fill with a bool mask),
fp32 logits, on an Ascend NPU."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, banned):
        return logits.masked_fill(banned, -10000.0)


batch = 256
vocab = 151936


def get_inputs():
    return [torch.randn(batch, vocab), torch.rand(batch, vocab) < 0.3]


def get_init_inputs():
    return []


def get_cases():
    return [{"batch": 256, "vocab": 151936}, {"batch": 1024, "vocab": 32000}]


def get_test_cases():
    return [{"batch": 3, "vocab": 1000}, {"batch": 2, "vocab": 3001}]
