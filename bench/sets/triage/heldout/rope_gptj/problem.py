"""Rotary position embedding, GPT-J (interleaved) convention, applied to (tokens, heads, head_dim) in fp16."""
import torch
import torch.nn as nn


def rotary_tables(head_dim, max_position, base):
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
    angles = torch.outer(torch.arange(max_position, dtype=torch.float32), inv_freq)
    return angles.cos(), angles.sin()


class Model(nn.Module):
    """Pairs (x[2i], x[2i+1]) are rotated by the angle of their position and frequency i."""

    def __init__(self, head_dim, max_position, base):
        super().__init__()
        cos, sin = rotary_tables(head_dim, max_position, base)
        self.register_buffer("cos", cos)
        self.register_buffer("sin", sin)

    def forward(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        cos = self.cos[positions][:, None, :]
        sin = self.sin[positions][:, None, :]
        x1 = x[..., 0::2].float()
        x2 = x[..., 1::2].float()
        out = torch.empty_like(x)
        out[..., 0::2] = (x1 * cos - x2 * sin).to(x.dtype)
        out[..., 1::2] = (x2 * cos + x1 * sin).to(x.dtype)
        return out


tokens = 16384
heads = 32
head_dim = 128
max_position = 8192
base = 10000.0


def get_inputs():
    x = torch.randn(tokens, heads, head_dim, dtype=torch.float16)
    positions = torch.randint(0, max_position, (tokens,))
    return [x, positions]


def get_init_inputs():
    return [head_dim, max_position, base]


def get_cases():
    return [
        {"tokens": 16384, "heads": 32, "head_dim": 128},
        {"tokens": 65536, "heads": 8, "head_dim": 128},
    ]


def get_test_cases():
    return [{"tokens": 4, "heads": 3, "head_dim": 32, "max_position": 16},
            {"tokens": 6, "heads": 2, "head_dim": 64, "max_position": 32}]
