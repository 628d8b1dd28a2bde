"""Weight-only int8 linear layer (W8A16): int8 weights with one fp32 scale per output channel,
bf16 activations and output."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.register_buffer("qweight", torch.randint(-127, 128, (out_features, in_features), dtype=torch.int8))
        self.register_buffer("scales", torch.rand(out_features) * 0.01 + 0.001)

    def forward(self, x):
        w = self.qweight.to(self.scales.dtype) * self.scales[:, None]
        return (x.to(w.dtype) @ w.t()).to(x.dtype)


tokens = 4096
in_features = 4096
out_features = 14336


def get_inputs():
    return [torch.randn(tokens, in_features, dtype=torch.bfloat16)]


def get_init_inputs():
    return [in_features, out_features]


def get_cases():
    return [
        {"tokens": 4096, "in_features": 4096, "out_features": 14336},
        {"tokens": 2048, "in_features": 14336, "out_features": 4096},
        {"tokens": 8192, "in_features": 5120, "out_features": 5120},
    ]


def get_test_cases():
    return [{"tokens": 33, "in_features": 64, "out_features": 96}]


def flops(case):
    return 2 * case["tokens"] * case["in_features"] * case["out_features"]
