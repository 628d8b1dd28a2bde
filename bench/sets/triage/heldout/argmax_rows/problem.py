"""Greedy decoding: index of the largest logit of each row over the vocabulary, fp32 logits."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits):
        return torch.argmax(logits, dim=-1)


batch = 1024
vocab = 128256


def get_inputs():
    return [torch.randn(batch, vocab)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch": 1024, "vocab": 128256},
        {"batch": 512, "vocab": 151936},
        {"batch": 2048, "vocab": 32000},
    ]


def get_test_cases():
    return [{"batch": 3, "vocab": 3000}, {"batch": 5, "vocab": 5000}]
