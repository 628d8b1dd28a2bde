"""Dynamic per-token symmetric int8 quantisation of MLP intermediate activations (bf16 in):
scale = max|x| / 127 per row, q = round(x / scale). Returns (q int8, scale fp32 [T, 1])."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        xf = x.float()
        scale = xf.abs().amax(dim=-1, keepdim=True).clamp(min=1e-10) / 127.0
        q = torch.round(xf / scale).clamp(-127, 127).to(torch.int8)
        return q, scale.float()


tokens = 4096
width = 53248


def get_inputs():
    return [torch.randn(tokens, width, dtype=torch.bfloat16)]


def get_init_inputs():
    return []


def get_cases():
    return [{"tokens": 4096, "width": 53248}, {"tokens": 8192, "width": 28672}, {"tokens": 2000, "width": 53248}]


def get_test_cases():
    return [{"tokens": 3, "width": 3000}, {"tokens": 4, "width": 1024}]
