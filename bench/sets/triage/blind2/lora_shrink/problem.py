"""LoRA down-projection ("shrink"): x @ A^T for a rank-16 adapter (A stored [rank, hidden]), scaled by alpha / rank; fp16 in,
fp32 out."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden, rank, alpha):
        super().__init__()
        self.lora_a = nn.Parameter(torch.randn(rank, hidden, dtype=torch.float16) / hidden ** 0.5)
        self.scaling = alpha / rank

    def forward(self, x):
        return (x.float() @ self.lora_a.float().t()) * self.scaling


tokens = 16384
hidden = 4096
rank = 16
alpha = 32


def get_inputs():
    return [torch.randn(tokens, hidden, dtype=torch.float16)]


def get_init_inputs():
    return [hidden, rank, alpha]


def get_cases():
    return [{"tokens": 16384, "hidden": 4096}, {"tokens": 32768, "hidden": 8192}, {"tokens": 10000, "hidden": 5120}]


def get_test_cases():
    return [{"tokens": 20, "hidden": 200}, {"tokens": 33, "hidden": 128}]


def flops(case):
    return 2 * case["tokens"] * case["hidden"] * rank
