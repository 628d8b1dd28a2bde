"""KernelBench level 2, problem 14: matmul with a weight parameter, divide by 2, sum over the hidden
dimension, scale; fp16. The output is one number per row, shape (batch_size, 1).

The cases are sized so that the roofline floor of the least work a correct forward needs
(``flops``, kernels/README.md) stays above 20 us."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """y = sum((x @ W.T) / 2, dim=1, keepdim=True) * scaling_factor."""

    def __init__(self, input_size, hidden_size, scaling_factor):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(hidden_size, input_size, dtype=torch.float16))
        self.scaling_factor = scaling_factor

    def forward(self, x):
        x = torch.matmul(x, self.weight.T)
        x = x / 2
        x = torch.sum(x, dim=1, keepdim=True)
        x = x * self.scaling_factor
        return x


batch_size = 1024
input_size = 8192
hidden_size = 8192
scaling_factor = 1.5


def get_inputs():
    return [torch.rand(batch_size, input_size, dtype=torch.float16)]


def get_init_inputs():
    return [input_size, hidden_size, scaling_factor]


def get_cases():
    return [
        {"batch_size": 1024, "input_size": 8192, "hidden_size": 8192},
        {"batch_size": 2048, "input_size": 6144, "hidden_size": 8192},
        {"batch_size": 8192, "input_size": 4096, "hidden_size": 4096},
        {"batch_size": 999, "input_size": 8191, "hidden_size": 6000},
        {"batch_size": 32768, "input_size": 1536, "hidden_size": 2048},
    ]


def get_test_cases():
    return [
        {"batch_size": 64, "input_size": 64, "hidden_size": 128},
        {"batch_size": 33, "input_size": 70, "hidden_size": 100},
    ]


def flops(case):
    """The least work a correct forward needs, less than the matmul's 2 M N K (kernels/README.md)."""
    m, k, n = case["batch_size"], case["input_size"], case["hidden_size"]
    return n * k + 2 * m * k


def bytes(case):
    m, k, n = case["batch_size"], case["input_size"], case["hidden_size"]
    return 2 * (m * k + n * k + m)
