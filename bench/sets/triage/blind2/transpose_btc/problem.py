"""Swap the last two axes of a [batch, rows, cols] fp32 tensor and make it contiguous (e.g. a
[B, T, C] activation to [B, C, T] for a channel-wise convolution)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x.transpose(1, 2).contiguous()


batch = 16
rows = 4096
cols = 2048


def get_inputs():
    return [torch.randn(batch, rows, cols, dtype=torch.float32)]


def get_init_inputs():
    return []


def get_cases():
    return [{"batch": 16, "rows": 4096, "cols": 2048}, {"batch": 4, "rows": 16384, "cols": 4096}, {"batch": 32, "rows": 3000, "cols": 1024}]


def get_test_cases():
    return [{"batch": 2, "rows": 130, "cols": 40}, {"batch": 1, "rows": 256, "cols": 128}]
