"""Mean token cross-entropy of language-model logits over the GPT-2 vocabulary (50257 entries),
with ignored positions (target -100); bf16 logits."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, logits, targets):
        return torch.nn.functional.cross_entropy(logits.float(), targets, ignore_index=-100)


tokens = 16384
vocab = 50257


def get_inputs():
    logits = torch.randn(tokens, vocab, dtype=torch.bfloat16) * 2
    targets = torch.randint(0, vocab, (tokens,), dtype=torch.int64)
    targets[::7] = -100
    return [logits, targets]


def get_init_inputs():
    return []


def get_cases():
    return [{"tokens": 16384}, {"tokens": 32768}, {"tokens": 8000}]


def get_test_cases():
    return [{"tokens": 5, "vocab": 3001}, {"tokens": 9, "vocab": 1000}]
