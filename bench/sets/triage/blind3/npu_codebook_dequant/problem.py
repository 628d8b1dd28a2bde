"""Codebook (NF4-style) weight dequantization: each 4-bit code (stored one per byte) indexes a
16-entry fp32 codebook and is scaled by the absmax of its 64-element block; fp16 output, Ascend."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("codebook", torch.linspace(-1.0, 1.0, 16))

    def forward(self, codes, absmax):
        values = self.codebook[codes.long()].view(absmax.numel(), -1)
        return (values * absmax[:, None]).to(torch.float16).view(-1)


numel = 4096 * 14336


def get_inputs():
    return [torch.randint(0, 16, (numel,), dtype=torch.uint8), torch.rand(numel // 64) + 0.5]


def get_init_inputs():
    return []


def get_cases():
    return [{"numel": 4096 * 14336}, {"numel": 8192 * 8192}, {"numel": 5120 * 13824}]


def get_test_cases():
    return [{"numel": 41 * 64 * 32}]
