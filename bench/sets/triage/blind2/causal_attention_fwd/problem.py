"""Causal multi-head self-attention forward (prefill), bf16, head_dim 128."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)


batch = 4
heads = 32
seq_len = 4096
head_dim = 128


def get_inputs():
    shape = (batch, heads, seq_len, head_dim)
    return [torch.randn(shape, dtype=torch.bfloat16) for _ in range(3)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch": 4, "heads": 32, "seq_len": 4096},
        {"batch": 1, "heads": 32, "seq_len": 16384},
        {"batch": 8, "heads": 16, "seq_len": 2000},
    ]


def get_test_cases():
    return [
        {"batch": 1, "heads": 2, "seq_len": 200, "head_dim": 64},
        {"batch": 1, "heads": 1, "seq_len": 256, "head_dim": 128},
    ]


def flops(case):
    return 2 * case["batch"] * case["heads"] * case["seq_len"] ** 2 * head_dim
