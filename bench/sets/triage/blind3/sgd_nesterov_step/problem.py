"""One SGD step with Nesterov momentum and weight decay over a flattened parameter buffer (fp32
params, grads and momentum); returns the new parameters and momentum."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, lr, momentum, weight_decay):
        super().__init__()
        self.lr, self.momentum, self.weight_decay = lr, momentum, weight_decay

    def forward(self, param, grad, buf):
        g = grad + self.weight_decay * param
        new_buf = self.momentum * buf + g
        step = g + self.momentum * new_buf
        return param - self.lr * step, new_buf


numel = 100_000_000


def get_inputs():
    return [torch.randn(numel), torch.randn(numel), torch.randn(numel)]


def get_init_inputs():
    return [0.05, 0.9, 1e-4]


def get_cases():
    return [{"numel": 100_000_000}, {"numel": 25_557_032}, {"numel": 350_000_000}]


def get_test_cases():
    return [{"numel": 10_000}]
