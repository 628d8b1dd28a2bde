"""Elman RNN recurrence over a sequence whose input projections are precomputed:
h_t = tanh(xw_t + h_{t-1} @ W_hh^T), returning every hidden state; fp32, hidden 64."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.w_hh = nn.Parameter(torch.randn(hidden, hidden) / hidden ** 0.5)

    def forward(self, xw):
        batch, steps, hidden = xw.shape
        h = xw.new_zeros(batch, hidden)
        outs = []
        for t in range(steps):
            h = torch.tanh(xw[:, t] + h @ self.w_hh.t())
            outs.append(h)
        return torch.stack(outs, dim=1)


batch = 1024
steps = 256
hidden = 64


def get_inputs():
    return [torch.randn(batch, steps, hidden)]


def get_init_inputs():
    return [hidden]


def get_cases():
    return [{"batch": 1024, "steps": 256}, {"batch": 4096, "steps": 128}, {"batch": 512, "steps": 1024}]


def get_test_cases():
    return [{"batch": 3, "steps": 5}]
