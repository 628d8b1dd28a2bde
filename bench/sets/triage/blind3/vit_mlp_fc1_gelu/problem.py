"""First MLP layer of a vision transformer block: Linear + tanh-approximated GELU; fp16."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden, dtype=torch.float16)

    def forward(self, x):
        return torch.nn.functional.gelu(self.fc1(x).float(), approximate="tanh").to(x.dtype)


tokens = 64 * 197
dim = 1024
hidden = 4096


def get_inputs():
    return [torch.randn(tokens, dim, dtype=torch.float16)]


def get_init_inputs():
    return [dim, hidden]


def get_cases():
    return [
        {"tokens": 64 * 197, "dim": 1024, "hidden": 4096},
        {"tokens": 32 * 257, "dim": 1280, "hidden": 5120},
        {"tokens": 16 * 577, "dim": 1664, "hidden": 8192},
    ]


def get_test_cases():
    return [{"tokens": 50, "dim": 128, "hidden": 160}]


def flops(case):
    return 2 * case["tokens"] * case["dim"] * case["hidden"]
