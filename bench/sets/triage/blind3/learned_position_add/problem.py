"""Add learned absolute position embeddings to a batch of token embeddings (BERT/GPT-2 input
layer); fp16, embeddings (seq, hidden) broadcast over the batch."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, max_seq, hidden):
        super().__init__()
        self.pos = nn.Parameter(torch.randn(max_seq, hidden, dtype=torch.float16) * 0.02)

    def forward(self, tok):
        return tok + self.pos[: tok.shape[1]]


batch = 64
seq = 1024
hidden = 1600
max_seq = 1024


def get_inputs():
    return [torch.randn(batch, seq, hidden, dtype=torch.float16)]


def get_init_inputs():
    return [max_seq, hidden]


def get_cases():
    return [
        {"batch": 64, "seq": 1024, "hidden": 1600, "max_seq": 1024},
        {"batch": 32, "seq": 512, "hidden": 768, "max_seq": 512},
        {"batch": 16, "seq": 2048, "hidden": 2560, "max_seq": 2048},
    ]


def get_test_cases():
    return [{"batch": 2, "seq": 7, "hidden": 40, "max_seq": 9}]
