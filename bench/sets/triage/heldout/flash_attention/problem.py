"""Non-causal scaled dot-product attention, fp16, (batch, heads, seq, head_dim)."""
import math

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        scale = 1.0 / math.sqrt(q.shape[-1])
        scores = torch.matmul(q.float(), k.float().transpose(-1, -2)) * scale
        return torch.matmul(torch.softmax(scores, dim=-1), v.float()).to(q.dtype)


batch = 4
heads = 16
seq = 4096
head_dim = 128


def get_inputs():
    shape = (batch, heads, seq, head_dim)
    return [torch.randn(shape, dtype=torch.float16) for _ in range(3)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch": 4, "heads": 16, "seq": 4096, "head_dim": 128},
        {"batch": 8, "heads": 32, "seq": 2048, "head_dim": 64},
    ]


def get_test_cases():
    return [{"batch": 1, "heads": 2, "seq": 128, "head_dim": 64}, {"batch": 2, "heads": 1, "seq": 256, "head_dim": 32}]


def flops(case):
    return 4 * batch * heads * seq * seq * head_dim
