"""Single-query (decode step) attention over a contiguous KV cache, fp16:
out[b, h] = softmax(q[b, h] . K[b, h].T / sqrt(d)) @ V[b, h]."""
import math

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k_cache, v_cache):
        scale = 1.0 / math.sqrt(q.shape[-1])
        scores = torch.einsum("bhd,bhnd->bhn", q.float(), k_cache.float()) * scale
        probs = torch.softmax(scores, dim=-1)
        return torch.einsum("bhn,bhnd->bhd", probs, v_cache.float()).to(q.dtype)


batch = 64
heads = 32
context = 4096
head_dim = 128


def get_inputs():
    q = torch.randn(batch, heads, head_dim, dtype=torch.float16)
    k = torch.randn(batch, heads, context, head_dim, dtype=torch.float16)
    v = torch.randn(batch, heads, context, head_dim, dtype=torch.float16)
    return [q, k, v]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch": 64, "heads": 32, "context": 4096, "head_dim": 128},
        {"batch": 16, "heads": 32, "context": 16384, "head_dim": 128},
    ]


def get_test_cases():
    return [{"batch": 2, "heads": 3, "context": 100, "head_dim": 64}, {"batch": 1, "heads": 2, "context": 300, "head_dim": 32}]
