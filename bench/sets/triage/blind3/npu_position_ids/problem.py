"""Absolute position ids for a decode/prefill batch: each request's cache offset (int64) added to
its per-token positions (int64), Ascend."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, token_pos, past_len):
        return token_pos + past_len


requests = 256
chunk = 2048


def get_inputs():
    token_pos = torch.arange(chunk, dtype=torch.int64).repeat(requests, 1)
    past_len = torch.randint(0, 32768, (requests, 1), dtype=torch.int64).expand(requests, chunk).contiguous()
    return [token_pos, past_len]


def get_init_inputs():
    return []


def get_cases():
    return [{"requests": 256, "chunk": 2048}, {"requests": 1024, "chunk": 1024}, {"requests": 64, "chunk": 8192}]


def get_test_cases():
    return [{"requests": 5, "chunk": 2048}]
