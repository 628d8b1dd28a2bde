"""Non-causal multi-head attention (encoder / cross-attention style), fp16, head_dim 64."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v)


batch = 16
heads = 16
seq_len = 2048
head_dim = 64


def get_inputs():
    shape = (batch, heads, seq_len, head_dim)
    return [torch.randn(shape, dtype=torch.float16) for _ in range(3)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch": 16, "heads": 16, "seq_len": 2048},
        {"batch": 4, "heads": 16, "seq_len": 8192},
        {"batch": 32, "heads": 12, "seq_len": 1500},
    ]


def get_test_cases():
    return [{"batch": 1, "heads": 2, "seq_len": 70}, {"batch": 1, "heads": 1, "seq_len": 128}]


def flops(case):
    return 4 * case["batch"] * case["heads"] * case["seq_len"] ** 2 * head_dim
