"""KernelBench level 2, problem 45: linear, sigmoid, a second linear, logsumexp over the features;
fp16. Output shape (batch_size,)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """y = logsumexp(linear2(sigmoid(linear1(x))), dim=1)."""

    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.linear1 = nn.Linear(input_size, hidden_size, dtype=torch.float16)
        self.linear2 = nn.Linear(hidden_size, output_size, dtype=torch.float16)

    def forward(self, x):
        x = self.linear1(x)
        x = torch.sigmoid(x)
        x = self.linear2(x)
        x = torch.logsumexp(x, dim=1)
        return x


batch_size = 16384
input_size = 2048
hidden_size = 4096
output_size = 1024


def get_inputs():
    return [torch.rand(batch_size, input_size, dtype=torch.float16)]


def get_init_inputs():
    return [input_size, hidden_size, output_size]


def get_cases():
    return [
        {"batch_size": 16384, "input_size": 2048, "hidden_size": 4096, "output_size": 1024},
        {"batch_size": 8192, "input_size": 1024, "hidden_size": 2048, "output_size": 1000},
        {"batch_size": 4096, "input_size": 4096, "hidden_size": 4096, "output_size": 4096},
        {"batch_size": 3000, "input_size": 2048, "hidden_size": 3000, "output_size": 777},
        {"batch_size": 8192, "input_size": 512, "hidden_size": 8192, "output_size": 256},
    ]


def get_test_cases():
    return [
        {"batch_size": 64, "input_size": 64, "hidden_size": 128, "output_size": 64},
        {"batch_size": 50, "input_size": 40, "hidden_size": 90, "output_size": 70},
    ]


def flops(case):
    m, k, h, n = case["batch_size"], case["input_size"], case["hidden_size"], case["output_size"]
    return 2 * m * h * (k + n)


def bytes(case):
    m, k, h, n = case["batch_size"], case["input_size"], case["hidden_size"], case["output_size"]
    return 2 * (m * k + h * k + h + n * h + n + m)
