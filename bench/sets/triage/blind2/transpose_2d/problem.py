"""Materialised transpose of a bf16 matrix (x.t().contiguous())."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x.t().contiguous()


rows = 8192
cols = 8192


def get_inputs():
    return [torch.randn(rows, cols, dtype=torch.bfloat16)]


def get_init_inputs():
    return []


def get_cases():
    return [{"rows": 8192, "cols": 8192}, {"rows": 16384, "cols": 4096}, {"rows": 12000, "cols": 4000}]


def get_test_cases():
    return [{"rows": 100, "cols": 80}, {"rows": 64, "cols": 128}]
