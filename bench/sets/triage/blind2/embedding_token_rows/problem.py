"""Embedding lookup for a batch of token ids (int64), bf16 table [vocab, hidden]."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, vocab, hidden):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden, dtype=torch.bfloat16)

    def forward(self, ids):
        return self.embed(ids)


batch = 8
seq_len = 4096
vocab = 128256
hidden = 4096


def get_inputs():
    return [torch.randint(0, vocab, (batch, seq_len), dtype=torch.int64)]


def get_init_inputs():
    return [vocab, hidden]


def get_cases():
    return [
        {"batch": 16, "seq_len": 2048, "vocab": 128256, "hidden": 4096},
        {"batch": 8, "seq_len": 8192, "vocab": 151936, "hidden": 3584},
        {"batch": 4, "seq_len": 5000, "vocab": 32000, "hidden": 8192},
    ]


def get_test_cases():
    return [
        {"batch": 2, "seq_len": 7, "vocab": 50, "hidden": 96},
        {"batch": 1, "seq_len": 33, "vocab": 100, "hidden": 256},
    ]
