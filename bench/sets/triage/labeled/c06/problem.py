import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, dtype=torch.float16)

    def forward(self, x):
        return torch.relu(self.linear(x)) * 2.0


batch = 4096
in_features = 4096
out_features = 4096


def get_inputs():
    return [torch.randn(batch, in_features, dtype=torch.float16)]


def get_init_inputs():
    return [in_features, out_features]


def get_cases():
    return [{"batch": 4096, "in_features": 4096, "out_features": 4096},
            {"batch": 8192, "in_features": 2048, "out_features": 4096},
            {"batch": 2048, "in_features": 4096, "out_features": 8192}]
