"""SwiGLU activation of a fused gate/up projection output: silu(gate) * up, in fp16."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """x = [gate | up] along the last dimension; y = silu(gate) * up."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate, up = x.chunk(2, dim=-1)
        return F.silu(gate) * up


tokens = 8192
intermediate = 14336


def get_inputs():
    return [torch.randn(tokens, 2 * intermediate, dtype=torch.float16)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"tokens": 8192, "intermediate": 14336},
        {"tokens": 16384, "intermediate": 11008},
        {"tokens": 2048, "intermediate": 28672},
    ]


def get_test_cases():
    return [{"tokens": 3, "intermediate": 200}, {"tokens": 5, "intermediate": 384}]
