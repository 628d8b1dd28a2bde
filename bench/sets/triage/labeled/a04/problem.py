import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return a + b


n = 1 << 22


def get_inputs():
    return [torch.randint(0, 1 << 40, (n,), dtype=torch.int64), torch.randint(0, 1 << 40, (n,), dtype=torch.int64)]


def get_init_inputs():
    return []


def get_cases():
    return [{"n": 1 << 22}, {"n": 1 << 23}, {"n": 1 << 21}]
