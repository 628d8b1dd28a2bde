"""Log-sum-exp of each row of language-model logits (the normaliser of a cross-entropy loss);
fp16 logits, fp32 result, large vocabularies."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits):
        return torch.logsumexp(logits.float(), dim=-1)


tokens = 4096
vocab = 128256


def get_inputs():
    return [torch.randn(tokens, vocab, dtype=torch.float16)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"tokens": 4096, "vocab": 128256},
        {"tokens": 16384, "vocab": 262144},
    ]


def get_test_cases():
    return [{"tokens": 3, "vocab": 5000}, {"tokens": 5, "vocab": 9000}]
