"""Per-group symmetric int8 quantisation of activations with groups of 128 consecutive values
along the hidden axis (block-wise quantisation for a low-precision GEMM). Returns (q int8 [T, H],
scales fp32 [T, H/128])."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, group_size):
        super().__init__()
        self.group_size = group_size

    def forward(self, x):
        t, h = x.shape
        g = x.float().view(t, h // self.group_size, self.group_size)
        scale = g.abs().amax(dim=-1, keepdim=True).clamp(min=1e-10) / 127.0
        q = torch.round(g / scale).clamp(-127, 127).to(torch.int8)
        return q.view(t, h), scale.squeeze(-1)


tokens = 16384
hidden = 7168
group_size = 128


def get_inputs():
    return [torch.randn(tokens, hidden, dtype=torch.bfloat16)]


def get_init_inputs():
    return [group_size]


def get_cases():
    return [{"tokens": 16384, "hidden": 7168}, {"tokens": 32768, "hidden": 4096}, {"tokens": 8000, "hidden": 18432}]


def get_test_cases():
    return [{"tokens": 3, "hidden": 512}, {"tokens": 5, "hidden": 256}]
