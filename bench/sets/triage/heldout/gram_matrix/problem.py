"""Gram (covariance-style) matrix of a tall feature matrix: G = X.T @ X, fp16 in, fp32 out."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.t().float() @ x.float()


samples = 131072
features = 512

ALLOW_TF32 = True


def get_inputs():
    return [torch.randn(samples, features, dtype=torch.float16)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"samples": 131072, "features": 512},
        {"samples": 262144, "features": 256},
    ]


def get_test_cases():
    return [{"samples": 200, "features": 48}, {"samples": 300, "features": 80}]


def flops(case):
    return 2 * samples * features * features
