"""Per-token cross-entropy of language-model logits against target ids (no reduction), over a
128k-entry vocabulary; bf16 logits, fp32 losses."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, logits, targets):
        return torch.nn.functional.cross_entropy(logits.float(), targets, reduction="none")


tokens = 8192
vocab = 128256


def get_inputs():
    logits = torch.randn(tokens, vocab, dtype=torch.bfloat16) * 2
    targets = torch.randint(0, vocab, (tokens,), dtype=torch.int64)
    return [logits, targets]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"tokens": 8192, "vocab": 128256},
        {"tokens": 4096, "vocab": 128256},
        {"tokens": 12000, "vocab": 128256},
    ]


def get_test_cases():
    return [
        {"tokens": 4, "vocab": 5000},
        {"tokens": 3, "vocab": 16384},
    ]
