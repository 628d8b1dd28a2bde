"""Reverse a batch of sequences along time ([batch, seq, hidden] fp16), as for the backward
direction of a bidirectional scan layer; on an Ascend NPU."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.flip(x, dims=[1])


batch = 8
seq_len = 4096
hidden = 1024


def get_inputs():
    return [torch.randn(batch, seq_len, hidden, dtype=torch.float16)]


def get_init_inputs():
    return []


def get_cases():
    return [{"batch": 8, "seq_len": 4096, "hidden": 1024}, {"batch": 2, "seq_len": 16384, "hidden": 2048},
            {"batch": 16, "seq_len": 1000, "hidden": 768}]


def get_test_cases():
    return [{"batch": 2, "seq_len": 21, "hidden": 48}, {"batch": 1, "seq_len": 40, "hidden": 32}]
