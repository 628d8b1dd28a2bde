"""Per-token cross-entropy loss of language-model logits against integer targets (no reduction);
fp16 logits, fp32 losses."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, target):
        return F.cross_entropy(logits.float(), target, reduction="none")


tokens = 16384
vocab = 32000


def get_inputs():
    return [torch.randn(tokens, vocab, dtype=torch.float16), torch.randint(0, vocab, (tokens,))]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"tokens": 16384, "vocab": 32000},
        {"tokens": 8192, "vocab": 128256},
        {"tokens": 32768, "vocab": 50304},
    ]


def get_test_cases():
    return [{"tokens": 3, "vocab": 3000}, {"tokens": 5, "vocab": 5000}]
