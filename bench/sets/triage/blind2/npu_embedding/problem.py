"""Token embedding lookup (int64 ids, fp16 table [vocab, hidden]) on an Ascend NPU."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, vocab, hidden):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden, dtype=torch.float16)

    def forward(self, ids):
        return self.embed(ids)


tokens = 16384
vocab = 151936
hidden = 4096


def get_inputs():
    return [torch.randint(0, vocab, (tokens,), dtype=torch.int64)]


def get_init_inputs():
    return [vocab, hidden]


def get_cases():
    return [
        {"tokens": 16384, "vocab": 151936, "hidden": 4096},
        {"tokens": 32768, "vocab": 128256, "hidden": 2048},
        {"tokens": 8192, "vocab": 32000, "hidden": 5120},
    ]


def get_test_cases():
    return [{"tokens": 17, "vocab": 50, "hidden": 64}, {"tokens": 9, "vocab": 30, "hidden": 160}]
