"""KernelBench level 2, problem 56: linear layer, sigmoid, sum over the features; fp16.
Output shape (batch_size, 1). Small batches against wide layers, as in KernelBench."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """y = sum(sigmoid(x @ W.T + b), dim=1, keepdim=True)."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.linear = nn.Linear(input_size, hidden_size, dtype=torch.float16)

    def forward(self, x):
        x = self.linear(x)
        x = torch.sigmoid(x)
        x = torch.sum(x, dim=1, keepdim=True)
        return x


batch_size = 128
input_size = 16384
hidden_size = 16384


def get_inputs():
    return [torch.rand(batch_size, input_size, dtype=torch.float16)]


def get_init_inputs():
    return [input_size, hidden_size]


def get_cases():
    return [
        {"batch_size": 128, "input_size": 16384, "hidden_size": 16384},
        {"batch_size": 256, "input_size": 16384, "hidden_size": 16384},
        {"batch_size": 1024, "input_size": 8192, "hidden_size": 4096},
        {"batch_size": 100, "input_size": 16000, "hidden_size": 16001},
        {"batch_size": 512, "input_size": 8192, "hidden_size": 8192},
    ]


def get_test_cases():
    return [
        {"batch_size": 32, "input_size": 128, "hidden_size": 128},
        {"batch_size": 20, "input_size": 100, "hidden_size": 1500},
    ]


def flops(case):
    return 2 * case["batch_size"] * case["input_size"] * case["hidden_size"]


def bytes(case):
    m, k, n = case["batch_size"], case["input_size"], case["hidden_size"]
    return 2 * (m * k + n * k + n + m)
