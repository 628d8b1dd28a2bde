"""One AdamW optimizer step on a flat fp32 parameter buffer (decoupled weight decay, bias
correction); returns the new parameters and both moment buffers."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, lr, beta1, beta2, eps, weight_decay, step):
        super().__init__()
        self.lr, self.beta1, self.beta2, self.eps, self.wd, self.step = lr, beta1, beta2, eps, weight_decay, step

    def forward(self, param, grad, exp_avg, exp_avg_sq):
        param = param * (1 - self.lr * self.wd)
        exp_avg = exp_avg * self.beta1 + grad * (1 - self.beta1)
        exp_avg_sq = exp_avg_sq * self.beta2 + grad * grad * (1 - self.beta2)
        bc1 = 1 - self.beta1 ** self.step
        bc2 = 1 - self.beta2 ** self.step
        denom = (exp_avg_sq / bc2).sqrt() + self.eps
        param = param - (self.lr / bc1) * exp_avg / denom
        return param, exp_avg, exp_avg_sq


numel = 67108864


def get_inputs():
    return [torch.randn(numel), torch.randn(numel) * 1e-2, torch.randn(numel) * 1e-3, torch.rand(numel) * 1e-4]


def get_init_inputs():
    return [1e-3, 0.9, 0.95, 1e-8, 0.1, 10]


def get_cases():
    return [{"numel": 67108864}, {"numel": 134217728}, {"numel": 50000000}]


def get_test_cases():
    return [{"numel": 5000}, {"numel": 8192}]
