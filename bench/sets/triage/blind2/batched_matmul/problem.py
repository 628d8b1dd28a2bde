"""Batched matrix product [B, M, K] @ [B, K, N], bf16 (e.g. per-group expert or per-head weights)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b):
        return torch.bmm(a, b)


batch = 16
M = 2048
N = 2048
K = 2048


def get_inputs():
    return [torch.randn(batch, M, K, dtype=torch.bfloat16), torch.randn(batch, K, N, dtype=torch.bfloat16)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch": 16, "M": 2048, "N": 2048, "K": 2048},
        {"batch": 64, "M": 1024, "N": 1024, "K": 4096},
        {"batch": 8, "M": 3000, "N": 2500, "K": 3072},
    ]


def get_test_cases():
    return [{"batch": 2, "M": 70, "N": 48, "K": 80}, {"batch": 3, "M": 64, "N": 64, "K": 64}]


def flops(case):
    return 2 * case["batch"] * case["M"] * case["N"] * case["K"]
