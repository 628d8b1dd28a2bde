import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v)


BATCH = 8
HEADS = 16
SEQ = 2048
HEAD_DIM = 64


def get_inputs():
    shape = (BATCH, HEADS, SEQ, HEAD_DIM)
    return [torch.randn(shape, dtype=torch.float16) for _ in range(3)]


def get_init_inputs():
    return []


def get_test_cases():
    return [{"BATCH": 1, "HEADS": 2, "SEQ": 256, "HEAD_DIM": 64}]
