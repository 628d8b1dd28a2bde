"""SwiGLU activation on the fused gate/up projection output: silu(gate) * up, bf16."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, gate_up):
        gate, up = gate_up.chunk(2, dim=-1)
        return torch.nn.functional.silu(gate) * up


tokens = 16384
intermediate = 14336


def get_inputs():
    return [torch.randn(tokens, 2 * intermediate, dtype=torch.bfloat16)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"tokens": 16384, "intermediate": 14336},
        {"tokens": 8192, "intermediate": 28672},
        {"tokens": 30000, "intermediate": 11008},
    ]


def get_test_cases():
    return [
        {"tokens": 3, "intermediate": 1000},
        {"tokens": 5, "intermediate": 4096},
    ]
