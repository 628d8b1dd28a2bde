"""Language-model head: final hidden states [T, H] times the vocabulary projection W [V, H]^T,
bf16 logits."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden, vocab):
        super().__init__()
        self.lm_head = nn.Linear(hidden, vocab, bias=False, dtype=torch.bfloat16)

    def forward(self, h):
        return self.lm_head(h)


tokens = 4096
hidden = 4096
vocab = 128256


def get_inputs():
    return [torch.randn(tokens, hidden, dtype=torch.bfloat16)]


def get_init_inputs():
    return [hidden, vocab]


def get_cases():
    return [
        {"tokens": 4096, "hidden": 4096, "vocab": 128256},
        {"tokens": 2048, "hidden": 8192, "vocab": 128256},
        {"tokens": 8192, "hidden": 3584, "vocab": 152064},
    ]


def get_test_cases():
    return [{"tokens": 70, "hidden": 64, "vocab": 300}, {"tokens": 64, "hidden": 128, "vocab": 256}]


def flops(case):
    return 2 * case["tokens"] * case["hidden"] * case["vocab"]
