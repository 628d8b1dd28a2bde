"""KernelBench level 1, problem 95: mean cross-entropy loss over a batch of logits, in fp32."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """loss = cross_entropy(predictions, targets) (mean over the batch, a 0-d tensor)."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return torch.nn.functional.cross_entropy(predictions, targets)


batch_size = 32768
num_classes = 4096


def get_inputs():
    return [torch.randn(batch_size, num_classes), torch.randint(0, num_classes, (batch_size,))]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 32768, "num_classes": 4096},
        {"batch_size": 65536, "num_classes": 1000},
        {"batch_size": 16384, "num_classes": 8192},
        {"batch_size": 4096, "num_classes": 32000},
        {"batch_size": 8192, "num_classes": 50257},
    ]


def get_test_cases():
    return [{"batch_size": 8, "num_classes": 1024}, {"batch_size": 5, "num_classes": 2500}]


def flops(case):
    return 4 * case["batch_size"] * case["num_classes"]


def bytes(case):
    return 4 * case["batch_size"] * case["num_classes"] + 8 * case["batch_size"] + 4
