"""Mean pooling over the sequence dimension of (batch, seq, hidden) activations, fp16."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.float().mean(dim=1).to(x.dtype)


batch = 16
seq = 4096
hidden = 4096


def get_inputs():
    return [torch.randn(batch, seq, hidden, dtype=torch.float16)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch": 16, "seq": 4096, "hidden": 4096},
        {"batch": 64, "seq": 1024, "hidden": 2048},
    ]


def get_test_cases():
    return [{"batch": 2, "seq": 40, "hidden": 8}, {"batch": 3, "seq": 300, "hidden": 16}]
