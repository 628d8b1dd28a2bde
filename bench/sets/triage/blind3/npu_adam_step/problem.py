"""One Adam step (bias-corrected, step 10) over flattened fp32 parameters, gradients and moments;
returns the new parameters and both moments. Ascend."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, lr, beta1, beta2, eps, step):
        super().__init__()
        self.lr, self.beta1, self.beta2, self.eps, self.step = lr, beta1, beta2, eps, step

    def forward(self, param, grad, exp_avg, exp_avg_sq):
        m = self.beta1 * exp_avg + (1 - self.beta1) * grad
        v = self.beta2 * exp_avg_sq + (1 - self.beta2) * grad * grad
        m_hat = m / (1 - self.beta1 ** self.step)
        v_hat = v / (1 - self.beta2 ** self.step)
        return param - self.lr * m_hat / (v_hat.sqrt() + self.eps), m, v


numel = 64 * 1024 * 1024


def get_inputs():
    return [torch.randn(numel), torch.randn(numel), torch.randn(numel) * 0.1, torch.rand(numel) * 0.01]


def get_init_inputs():
    return [1e-3, 0.9, 0.999, 1e-8, 10]


def get_cases():
    return [{"numel": 64 * 1024 * 1024}, {"numel": 7_000 * 1024}, {"numel": 200 * 1024 * 1024}]


def get_test_cases():
    return [{"numel": 45 * 1024}]
