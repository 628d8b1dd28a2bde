"""Inclusive prefix sum along the time axis of a [batch, time, channels] fp32 tensor (e.g. the
cumulative decay of a linear-recurrence layer)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.cumsum(x, dim=1)


batch = 8
time = 4096
channels = 4096


def get_inputs():
    return [torch.randn(batch, time, channels, dtype=torch.float32)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch": 8, "time": 4096, "channels": 4096},
        {"batch": 2, "time": 16384, "channels": 2048},
        {"batch": 16, "time": 1000, "channels": 5120},
    ]


def get_test_cases():
    return [{"batch": 2, "time": 100, "channels": 6}, {"batch": 1, "time": 300, "channels": 4}]
