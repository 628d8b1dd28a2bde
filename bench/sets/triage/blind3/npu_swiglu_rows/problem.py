"""SwiGLU activation of a fused gate/up projection output: silu(gate) * up, where the input holds
[gate | up] along the last axis; fp16, Ascend."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, gate_up):
        gate, up = gate_up.float().chunk(2, dim=-1)
        return (torch.nn.functional.silu(gate) * up).to(gate_up.dtype)


tokens = 16384
inter = 2048


def get_inputs():
    return [torch.randn(tokens, 2 * inter, dtype=torch.float16)]


def get_init_inputs():
    return []


def get_cases():
    return [{"tokens": 16384, "inter": 2048}, {"tokens": 32768, "inter": 1024}, {"tokens": 8192, "inter": 4096}]


def get_test_cases():
    return [{"tokens": 3, "inter": 256}]
