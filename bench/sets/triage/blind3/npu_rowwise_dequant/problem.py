"""Dequantize a per-row int8 tensor (e.g. an int8 KV-cache block or int8 activations) with one fp32
scale per row to fp16, Ascend."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, scale):
        return (q.float() * scale[:, None]).to(torch.float16)


rows = 32768
cols = 4096


def get_inputs():
    return [torch.randint(-127, 128, (rows, cols), dtype=torch.int8), torch.rand(rows) * 0.05]


def get_init_inputs():
    return []


def get_cases():
    return [{"rows": 32768, "cols": 4096}, {"rows": 16384, "cols": 8192}, {"rows": 65536, "cols": 2048}]


def get_test_cases():
    return [{"rows": 41, "cols": 2048}]
