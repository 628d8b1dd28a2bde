"""KernelBench level 1, problem 89: inclusive prefix sum (cumsum) along dim 1, in fp32."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """y = cumsum(x, dim)."""

    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.cumsum(x, dim=self.dim)


batch_size = 4096
input_shape = (32768,)
dim = 1


def get_inputs():
    # rand (positive), as in KernelBench: prefix sums grow steadily instead of wandering through 0,
    # so relative tolerances stay meaningful over tens of thousands of terms.
    return [torch.rand(batch_size, *input_shape)]


def get_init_inputs():
    return [dim]


def get_cases():
    return [
        {"batch_size": 4096, "input_shape": (32768,)},
        {"batch_size": 8192, "input_shape": (8192,)},
        {"batch_size": 2048, "input_shape": (65536,)},
        {"batch_size": 32768, "input_shape": (4096,)},
        {"batch_size": 10000, "input_shape": (10001,)},
    ]


def get_test_cases():
    return [{"batch_size": 3, "input_shape": (1024,)}, {"batch_size": 4, "input_shape": (2500,)}]


def flops(case):
    return case["batch_size"] * case["input_shape"][0]


def bytes(case):
    return 2 * 4 * case["batch_size"] * case["input_shape"][0]
