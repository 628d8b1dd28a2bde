import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.table = nn.Embedding(vocab, dim)

    def forward(self, ids):
        return self.table(ids)


tokens = 8192
vocab = 32000
dim = 1024


def get_inputs():
    return [torch.randint(0, vocab, (tokens,), dtype=torch.int32)]


def get_init_inputs():
    return [vocab, dim]


def get_cases():
    return [{"tokens": 8192}, {"tokens": 16384}, {"tokens": 4096}]
