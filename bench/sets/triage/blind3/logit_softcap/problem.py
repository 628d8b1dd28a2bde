"""Final-logit soft-capping (cap * tanh(logits / cap), as in Gemma-style heads) on bf16 logits whose
vocabulary was padded with a few extra tokens."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, cap):
        super().__init__()
        self.cap = cap

    def forward(self, logits):
        return (self.cap * torch.tanh(logits.float() / self.cap)).to(logits.dtype)


tokens = 4096
vocab = 32001
cap = 30.0


def get_inputs():
    return [torch.randn(tokens, vocab, dtype=torch.bfloat16) * 20]


def get_init_inputs():
    return [cap]


def get_cases():
    return [{"tokens": 4096, "vocab": 32001}, {"tokens": 2048, "vocab": 50257}, {"tokens": 1024, "vocab": 100277}]


def get_test_cases():
    return [{"tokens": 3, "vocab": 1001}]
