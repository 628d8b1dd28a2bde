"""KernelBench level 2, problem 22: linear layer, scale, residual add (x + x), clamp, logsumexp over
the features, then x * mish(x); fp16. Output shape (batch_size, 1).

The clamp range is [-1, 1] rather than KernelBench's [-10, 10]: the scaled linear outputs here stay
within a few units, so a [-10, 10] clamp would never act and a kernel that skipped it would pass.
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    """y = lse(clamp(2 * s * linear(x))) ; out = y * mish(y)."""

    def __init__(self, input_size, hidden_size, scale_factor, clamp_min, clamp_max):
        super().__init__()
        self.matmul = nn.Linear(input_size, hidden_size, dtype=torch.float16)
        self.scale_factor = scale_factor
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max

    def forward(self, x):
        x = self.matmul(x)
        x = x * self.scale_factor
        x = x + x
        x = torch.clamp(x, self.clamp_min, self.clamp_max)
        x = torch.logsumexp(x, dim=1, keepdim=True)
        x = x * torch.nn.functional.mish(x)
        return x


batch_size = 1024
input_size = 8192
hidden_size = 8192
scale_factor = 2.0
clamp_min = -1.0
clamp_max = 1.0


def get_inputs():
    return [torch.rand(batch_size, input_size, dtype=torch.float16)]


def get_init_inputs():
    return [input_size, hidden_size, scale_factor, clamp_min, clamp_max]


def get_cases():
    return [
        {"batch_size": 1024, "input_size": 8192, "hidden_size": 8192},
        {"batch_size": 2048, "input_size": 4096, "hidden_size": 4096},
        {"batch_size": 3000, "input_size": 3000, "hidden_size": 5000},
        {"batch_size": 4096, "input_size": 8192, "hidden_size": 1536},
        {"batch_size": 777, "input_size": 8192, "hidden_size": 8192},
    ]


def get_test_cases():
    return [
        {"batch_size": 64, "input_size": 64, "hidden_size": 128},
        {"batch_size": 40, "input_size": 100, "hidden_size": 1100},
    ]


def flops(case):
    return 2 * case["batch_size"] * case["input_size"] * case["hidden_size"]


def bytes(case):
    m, k, n = case["batch_size"], case["input_size"], case["hidden_size"]
    return 2 * (m * k + n * k + n + m)
