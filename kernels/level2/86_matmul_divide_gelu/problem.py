"""KernelBench level 2, problem 86: linear layer, divide by a constant, GELU; fp16.

The divisor is 0.25 rather than KernelBench's 10: the linear outputs here have a standard deviation
near 0.3, and divided by 10 they would sit where GELU(x) is close to x / 2, so a kernel that
replaced the GELU by a halving would pass.
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    """y = gelu((x @ W.T + b) / divisor)."""

    def __init__(self, input_size, output_size, divisor):
        super().__init__()
        self.linear = nn.Linear(input_size, output_size, dtype=torch.float16)
        self.divisor = divisor

    def forward(self, x):
        x = self.linear(x)
        x = x / self.divisor
        x = torch.nn.functional.gelu(x)
        return x


batch_size = 1024
input_size = 8192
output_size = 8192
divisor = 0.25


def get_inputs():
    return [torch.rand(batch_size, input_size, dtype=torch.float16)]


def get_init_inputs():
    return [input_size, output_size, divisor]


def get_cases():
    return [
        {"batch_size": 1024, "input_size": 8192, "output_size": 8192},
        {"batch_size": 2048, "input_size": 4096, "output_size": 8192},
        {"batch_size": 4096, "input_size": 4096, "output_size": 4096},
        {"batch_size": 1500, "input_size": 6000, "output_size": 6000},
        {"batch_size": 600, "input_size": 8192, "output_size": 16384},
    ]


def get_test_cases():
    return [
        {"batch_size": 64, "input_size": 64, "output_size": 64},
        {"batch_size": 75, "input_size": 50, "output_size": 99},
    ]


def flops(case):
    return 2 * case["batch_size"] * case["input_size"] * case["output_size"]


def bytes(case):
    m, k, n = case["batch_size"], case["input_size"], case["output_size"]
    return 2 * (m * k + n * k + n + m * n)
