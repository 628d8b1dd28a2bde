"""SwiGLU activation silu(gate) * up on the fused gate/up projection output [T, 2I] (fp16), on an
Ascend NPU; the intermediate size is a multiple of 1024."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, gate_up):
        gate, up = gate_up.float().chunk(2, dim=-1)
        return (torch.nn.functional.silu(gate) * up).to(gate_up.dtype)


tokens = 8192
intermediate = 14336


def get_inputs():
    return [torch.randn(tokens, 2 * intermediate, dtype=torch.float16)]


def get_init_inputs():
    return []


def get_cases():
    return [{"tokens": 8192, "intermediate": 14336}, {"tokens": 4096, "intermediate": 28672},
            {"tokens": 20000, "intermediate": 11264}]


def get_test_cases():
    return [{"tokens": 5, "intermediate": 2048}, {"tokens": 3, "intermediate": 1024}]
