"""RMSNorm fused with static int8 quantisation of the normalised output (the input of an int8
GEMM): q = clamp(round(rmsnorm(x) * w / scale), -127, 127); bf16 in, int8 out."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden, eps, scale):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(hidden, dtype=torch.bfloat16).uniform_(0.5, 1.5))
        self.eps, self.scale = eps, scale

    def forward(self, x):
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight.float()
        return torch.round(y / self.scale).clamp(-127, 127).to(torch.int8)


tokens = 32768
hidden = 8192
eps = 1e-6
scale = 0.03


def get_inputs():
    return [torch.randn(tokens, hidden, dtype=torch.bfloat16)]


def get_init_inputs():
    return [hidden, eps, scale]


def get_cases():
    return [{"tokens": 32768, "hidden": 8192}, {"tokens": 65536, "hidden": 4096}, {"tokens": 20000, "hidden": 7168}]


def get_test_cases():
    return [{"tokens": 3, "hidden": 2000}, {"tokens": 4, "hidden": 512}]
