"""Split heads: reshape a [batch, seq, heads * head_dim] projection output to [batch, heads, seq,
head_dim] and make it contiguous; bf16."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, heads):
        super().__init__()
        self.heads = heads

    def forward(self, x):
        b, s, hd = x.shape
        return x.view(b, s, self.heads, hd // self.heads).transpose(1, 2).contiguous()


batch = 16
seq_len = 4096
heads = 32
head_dim = 128


def get_inputs():
    return [torch.randn(batch, seq_len, heads * head_dim, dtype=torch.bfloat16)]


def get_init_inputs():
    return [heads]


def get_cases():
    return [
        {"batch": 16, "seq_len": 4096, "heads": 32, "head_dim": 128},
        {"batch": 4, "seq_len": 16384, "heads": 64, "head_dim": 128},
        {"batch": 32, "seq_len": 2000, "heads": 40, "head_dim": 128},
    ]


def get_test_cases():
    return [{"batch": 2, "seq_len": 5, "heads": 3, "head_dim": 16}, {"batch": 1, "seq_len": 9, "heads": 4, "head_dim": 32}]
