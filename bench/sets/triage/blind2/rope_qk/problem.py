"""Rotary position embedding (rotate-half / NeoX convention) applied to the query and key heads of
a fused QKV projection, with cos/sin looked up from a precomputed cache by each token's position;
bf16 activations. Returns the rotated queries and keys."""
import torch
import torch.nn as nn


def _rotate(x, cos, sin):
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half].float(), x[..., half:].float()
    c, s = cos[:, None, :], sin[:, None, :]
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1).to(x.dtype)


class Model(nn.Module):
    def __init__(self, q_heads, kv_heads, head_dim):
        super().__init__()
        self.q_heads, self.kv_heads, self.head_dim = q_heads, kv_heads, head_dim

    def forward(self, qkv, positions, cos_sin_cache):
        t = qkv.shape[0]
        heads = qkv.view(t, self.q_heads + 2 * self.kv_heads, self.head_dim)
        q, k = heads[:, :self.q_heads], heads[:, self.q_heads:self.q_heads + self.kv_heads]
        half = self.head_dim // 2
        cs = cos_sin_cache[positions]
        cos, sin = cs[:, :half], cs[:, half:]
        return _rotate(q, cos, sin), _rotate(k, cos, sin)


tokens = 16384
q_heads = 32
kv_heads = 8
head_dim = 128
max_positions = 32768


def get_inputs():
    half = head_dim // 2
    inv_freq = 1.0 / (10000 ** (torch.arange(half, dtype=torch.float32) / half))
    angles = torch.arange(max_positions, dtype=torch.float32)[:, None] * inv_freq[None, :]
    cache = torch.cat([angles.cos(), angles.sin()], dim=-1)
    qkv = torch.randn(tokens, (q_heads + 2 * kv_heads) * head_dim, dtype=torch.bfloat16)
    positions = torch.randint(0, max_positions, (tokens,), dtype=torch.int64)
    return [qkv, positions, cache]


def get_init_inputs():
    return [q_heads, kv_heads, head_dim]


def get_cases():
    return [
        {"tokens": 16384, "q_heads": 32, "kv_heads": 8, "head_dim": 128},
        {"tokens": 32768, "q_heads": 64, "kv_heads": 8, "head_dim": 128},
        {"tokens": 12000, "q_heads": 28, "kv_heads": 4, "head_dim": 128},
    ]


def get_test_cases():
    return [
        {"tokens": 5, "q_heads": 4, "kv_heads": 2, "head_dim": 64, "max_positions": 64},
        {"tokens": 3, "q_heads": 6, "kv_heads": 2, "head_dim": 128, "max_positions": 64},
    ]
