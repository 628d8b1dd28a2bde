"""Grouped-query attention (non-causal, as in an encoder or a prefill without a mask): 32 query
heads share 8 key/value heads; fp16, head dim 128."""
import math

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        group = q.shape[1] // k.shape[1]
        k = k.repeat_interleave(group, dim=1)
        v = v.repeat_interleave(group, dim=1)
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
        return torch.matmul(torch.softmax(scores.float(), dim=-1).to(q.dtype), v)


batch = 4
q_heads = 32
kv_heads = 8
seq = 4096
head_dim = 128


def get_inputs():
    q = torch.randn(batch, q_heads, seq, head_dim, dtype=torch.float16)
    k = torch.randn(batch, kv_heads, seq, head_dim, dtype=torch.float16)
    v = torch.randn(batch, kv_heads, seq, head_dim, dtype=torch.float16)
    return [q, k, v]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch": 4, "q_heads": 32, "kv_heads": 8, "seq": 4096},
        {"batch": 1, "q_heads": 64, "kv_heads": 8, "seq": 8192},
        {"batch": 16, "q_heads": 32, "kv_heads": 8, "seq": 1024},
    ]


def get_test_cases():
    return [{"batch": 1, "q_heads": 4, "kv_heads": 2, "seq": 80}]


def flops(case):
    return 4 * case["batch"] * case["q_heads"] * case["seq"] ** 2 * head_dim
