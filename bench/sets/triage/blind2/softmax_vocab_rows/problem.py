"""Temperature-scaled softmax over the vocabulary for a batch of next-token logits (fp32), as used
before sampling."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, temperature):
        super().__init__()
        self.temperature = temperature

    def forward(self, logits):
        return torch.softmax(logits / self.temperature, dim=-1)


rows = 4096
vocab = 128256
temperature = 0.7


def get_inputs():
    return [torch.randn(rows, vocab, dtype=torch.float32) * 3]


def get_init_inputs():
    return [temperature]


def get_cases():
    return [{"rows": 4096, "vocab": 128256}, {"rows": 2048, "vocab": 152064}, {"rows": 8192, "vocab": 32000}]


def get_test_cases():
    return [{"rows": 3, "vocab": 1000}, {"rows": 2, "vocab": 3000}]
