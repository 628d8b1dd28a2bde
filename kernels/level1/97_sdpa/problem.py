"""KernelBench level 1, problem 97: scaled dot-product attention (no mask, no dropout), in fp16.

Shapes are (batch, heads, sequence, head_dim) with the head dimensions of real models (64, 128),
including sequence lengths that are not multiples of any block size.
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    """out = softmax(Q K^T / sqrt(d)) V."""

    def __init__(self):
        super().__init__()

    def forward(self, Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.scaled_dot_product_attention(Q, K, V)


batch_size = 16
num_heads = 16
sequence_length = 1024
head_dim = 64


def get_inputs():
    shape = (batch_size, num_heads, sequence_length, head_dim)
    Q = torch.randn(shape, dtype=torch.float16)
    K = torch.randn(shape, dtype=torch.float16)
    V = torch.randn(shape, dtype=torch.float16)
    return [Q, K, V]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 16, "num_heads": 16, "sequence_length": 1024, "head_dim": 64},
        {"batch_size": 8, "num_heads": 16, "sequence_length": 2048, "head_dim": 128},
        {"batch_size": 4, "num_heads": 32, "sequence_length": 4096, "head_dim": 64},
        {"batch_size": 16, "num_heads": 12, "sequence_length": 1000, "head_dim": 64},
        {"batch_size": 2, "num_heads": 16, "sequence_length": 3001, "head_dim": 128},
    ]


def get_test_cases():
    return [
        {"batch_size": 1, "num_heads": 2, "sequence_length": 128, "head_dim": 64},
        {"batch_size": 2, "num_heads": 1, "sequence_length": 100, "head_dim": 128},
    ]


def flops(case):
    bh = case["batch_size"] * case["num_heads"]
    return 4 * bh * case["sequence_length"] ** 2 * case["head_dim"]


def bytes(case):
    return 4 * 2 * case["batch_size"] * case["num_heads"] * case["sequence_length"] * case["head_dim"]
