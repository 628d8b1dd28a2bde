"""Rotary position embedding (rotate-half / NeoX layout) applied to the query tensor (tokens,
heads, head_dim=128) with per-token cos/sin tables; fp16."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, cos, sin):
        half = q.shape[-1] // 2
        q1, q2 = q[..., :half].float(), q[..., half:].float()
        c, s = cos[:, None, :].float(), sin[:, None, :].float()
        return torch.cat([q1 * c - q2 * s, q2 * c + q1 * s], dim=-1).to(q.dtype)


tokens = 16384
heads = 32
head_dim = 128


def get_inputs():
    angles = torch.rand(tokens, head_dim // 2) * 6.28
    return [torch.randn(tokens, heads, head_dim, dtype=torch.float16),
            angles.cos().to(torch.float16), angles.sin().to(torch.float16)]


def get_init_inputs():
    return []


def get_cases():
    return [{"tokens": 16384, "heads": 32}, {"tokens": 32768, "heads": 40}, {"tokens": 8192, "heads": 64}]


def get_test_cases():
    return [{"tokens": 3, "heads": 2}]
