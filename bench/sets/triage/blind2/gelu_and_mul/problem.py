"""GeGLU activation: gelu(a) * b for separate gate and up tensors (tanh-approximated GELU), fp16."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, gate, up):
        return torch.nn.functional.gelu(gate.float(), approximate="tanh").to(gate.dtype) * up


tokens = 16384
intermediate = 16384


def get_inputs():
    return [torch.randn(tokens, intermediate, dtype=torch.float16), torch.randn(tokens, intermediate, dtype=torch.float16)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"tokens": 16384, "intermediate": 16384},
        {"tokens": 8192, "intermediate": 24576},
        {"tokens": 30000, "intermediate": 9216},
    ]


def get_test_cases():
    return [{"tokens": 3, "intermediate": 100}, {"tokens": 4, "intermediate": 256}]
