"""Linear layer with bias, fp16, across prefill-sized and decode-sized batches."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, dtype=torch.float16)

    def forward(self, x):
        return self.linear(x)


batch_size = 8192
in_features = 8192
out_features = 8192


def get_inputs():
    return [torch.randn(batch_size, in_features, dtype=torch.float16)]


def get_init_inputs():
    return [in_features, out_features]


def get_cases():
    return [
        {"batch_size": 8192, "in_features": 8192, "out_features": 8192},
        {"batch_size": 32, "in_features": 8192, "out_features": 28672},
        {"batch_size": 4096, "in_features": 12288, "out_features": 3072},
    ]


def get_test_cases():
    return [
        {"batch_size": 5, "in_features": 96, "out_features": 80},
        {"batch_size": 130, "in_features": 200, "out_features": 70},
    ]
