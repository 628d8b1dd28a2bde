"""Apply a key-padding mask (int32, 1 = real token) to attention scores (batch*heads*queries rows,
keys) before softmax, Ascend; fp32."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, heads):
        super().__init__()
        self.heads = heads

    def forward(self, scores, key_mask):
        b, kv = key_mask.shape
        s = scores.view(b, -1, kv)
        return torch.where(key_mask[:, None, :] != 0, s, torch.full_like(s, -1e4)).view_as(scores)


batch = 16
heads = 16
queries = 512
keys = 512


def get_inputs():
    lengths = torch.randint(keys // 4, keys + 1, (batch,))
    key_mask = (torch.arange(keys)[None, :] < lengths[:, None]).to(torch.int32)
    return [torch.randn(batch * heads * queries, keys), key_mask]


def get_init_inputs():
    return [heads]


def get_cases():
    return [
        {"batch": 16, "heads": 16, "queries": 512, "keys": 512},
        {"batch": 8, "heads": 32, "queries": 1024, "keys": 1024},
        {"batch": 64, "heads": 12, "queries": 128, "keys": 128},
    ]


def get_test_cases():
    return [{"batch": 2, "heads": 3, "queries": 4, "keys": 64}]
