"""Log-softmax of language-model logits over the vocabulary, fp16 in and out (fp32 math)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(logits.float(), dim=-1).to(logits.dtype)


tokens = 4096
vocab = 128256


def get_inputs():
    return [torch.randn(tokens, vocab, dtype=torch.float16)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"tokens": 4096, "vocab": 128256},
        {"tokens": 8192, "vocab": 32000},
        {"tokens": 2048, "vocab": 151936},
    ]


def get_test_cases():
    return [{"tokens": 3, "vocab": 1000}, {"tokens": 4, "vocab": 3000}]
