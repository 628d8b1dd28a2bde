"""Write the new tokens' keys and values into a paged KV cache: token t goes to slot
slot_mapping[t] (block = slot // block_size, offset = slot % block_size) of caches shaped
[num_blocks, block_size, kv_heads, head_dim]; bf16. Returns the updated caches."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, key, value, k_cache, v_cache, slot_mapping):
        nb, bs, h, d = k_cache.shape
        k_cache = k_cache.clone().view(nb * bs, h, d)
        v_cache = v_cache.clone().view(nb * bs, h, d)
        k_cache[slot_mapping] = key
        v_cache[slot_mapping] = value
        return k_cache.view(nb, bs, h, d), v_cache.view(nb, bs, h, d)


tokens = 16384
kv_heads = 8
head_dim = 128
num_blocks = 8192
block_size = 16


def get_inputs():
    key = torch.randn(tokens, kv_heads, head_dim, dtype=torch.bfloat16)
    value = torch.randn(tokens, kv_heads, head_dim, dtype=torch.bfloat16)
    k_cache = torch.zeros(num_blocks, block_size, kv_heads, head_dim, dtype=torch.bfloat16)
    v_cache = torch.zeros(num_blocks, block_size, kv_heads, head_dim, dtype=torch.bfloat16)
    slots = torch.randperm(num_blocks * block_size)[:tokens].to(torch.int64)
    return [key, value, k_cache, v_cache, slots]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"tokens": 16384, "kv_heads": 8, "num_blocks": 8192},
        {"tokens": 65536, "kv_heads": 8, "num_blocks": 16384},
        {"tokens": 32768, "kv_heads": 4, "num_blocks": 4096},
    ]


def get_test_cases():
    return [{"tokens": 10, "kv_heads": 2, "head_dim": 32, "num_blocks": 4, "block_size": 4}]
