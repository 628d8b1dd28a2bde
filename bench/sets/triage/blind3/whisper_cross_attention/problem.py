"""Decoder cross-attention over encoder states (Whisper-style: 1500 audio frames, head dim 64),
no mask; fp16."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v)


batch = 32
heads = 20
q_len = 448
kv_len = 1500
head_dim = 64


def get_inputs():
    return [torch.randn(batch, heads, q_len, head_dim, dtype=torch.float16),
            torch.randn(batch, heads, kv_len, head_dim, dtype=torch.float16),
            torch.randn(batch, heads, kv_len, head_dim, dtype=torch.float16)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch": 32, "heads": 20, "q_len": 448, "kv_len": 1500},
        {"batch": 64, "heads": 16, "q_len": 256, "kv_len": 1500},
        {"batch": 8, "heads": 20, "q_len": 448, "kv_len": 3000},
    ]


def get_test_cases():
    return [{"batch": 1, "heads": 2, "q_len": 40, "kv_len": 70}]


def flops(case):
    return 4 * case["batch"] * case["heads"] * case["q_len"] * case["kv_len"] * head_dim
