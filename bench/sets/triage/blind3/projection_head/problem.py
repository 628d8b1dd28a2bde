"""Embedding projection head (CLIP-style): pooled features of a batch projected to the joint
embedding space, no bias; fp16."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, features, embed_dim):
        super().__init__()
        self.proj = nn.Linear(features, embed_dim, bias=False, dtype=torch.float16)

    def forward(self, x):
        return self.proj(x)


batch = 128
features = 1024
embed_dim = 768


def get_inputs():
    return [torch.randn(batch, features, dtype=torch.float16)]


def get_init_inputs():
    return [features, embed_dim]


def get_cases():
    return [
        {"batch": 128, "features": 1024, "embed_dim": 768},
        {"batch": 256, "features": 1280, "embed_dim": 1024},
        {"batch": 64, "features": 768, "embed_dim": 512},
    ]


def get_test_cases():
    return [{"batch": 5, "features": 192, "embed_dim": 96}]


def flops(case):
    return 2 * case["batch"] * case["features"] * case["embed_dim"]
