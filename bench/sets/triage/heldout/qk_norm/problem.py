"""Per-head RMSNorm of query/key heads (QK-norm): normalise each head vector over head_dim, fp16."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """y[t, h, :] = x[t, h, :] / rms(x[t, h, :]) * weight."""

    def __init__(self, head_dim, eps):
        super().__init__()
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(head_dim))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xf = x.float()
        rms = torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return (xf * rms * self.weight).to(x.dtype)


tokens = 16384
heads = 32
head_dim = 128
eps = 1e-6


def get_inputs():
    return [torch.randn(tokens, heads, head_dim, dtype=torch.float16)]


def get_init_inputs():
    return [head_dim, eps]


def get_cases():
    return [
        {"tokens": 16384, "heads": 32, "head_dim": 128},
        {"tokens": 65536, "heads": 8, "head_dim": 128},
        {"tokens": 32768, "heads": 16, "head_dim": 64},
    ]


def get_test_cases():
    return [{"tokens": 5, "heads": 3, "head_dim": 64}, {"tokens": 7, "heads": 2, "head_dim": 128}]
