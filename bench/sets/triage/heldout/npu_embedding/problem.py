"""Token embedding lookup (int64 token ids into an fp16 table), on an Ascend NPU."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, dtype=torch.float16)

    def forward(self, ids):
        return self.embed(ids)


tokens = 16384
vocab = 128256
dim = 4096


def get_inputs():
    return [torch.randint(0, vocab, (tokens,))]


def get_init_inputs():
    return [vocab, dim]


def get_cases():
    return [{"tokens": 16384, "vocab": 128256, "dim": 4096}, {"tokens": 65536, "vocab": 32000, "dim": 2048}]


def get_test_cases():
    return [{"tokens": 50, "vocab": 100, "dim": 64}, {"tokens": 70, "vocab": 300, "dim": 128}]
