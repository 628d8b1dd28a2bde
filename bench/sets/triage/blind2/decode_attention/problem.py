"""Single-token decode attention over a long KV cache: one query per sequence and head attends to
all cached keys/values of that head; fp16, head_dim 128."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, q, k_cache, v_cache):
        s = torch.einsum("bhd,bhnd->bhn", q.float(), k_cache.float()) * q.shape[-1] ** -0.5
        return torch.einsum("bhn,bhnd->bhd", torch.softmax(s, dim=-1), v_cache.float()).to(q.dtype)


batch = 4
heads = 32
context = 32768
head_dim = 128


def get_inputs():
    return [torch.randn(batch, heads, head_dim, dtype=torch.float16),
            torch.randn(batch, heads, context, head_dim, dtype=torch.float16),
            torch.randn(batch, heads, context, head_dim, dtype=torch.float16)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch": 4, "heads": 32, "context": 32768},
        {"batch": 1, "heads": 64, "context": 65536},
        {"batch": 2, "heads": 40, "context": 50000},
    ]


def get_test_cases():
    return [{"batch": 1, "heads": 2, "context": 300, "head_dim": 64}, {"batch": 2, "heads": 1, "context": 129, "head_dim": 128}]
