"""Mixture-of-experts expert projection with top-1 routing: each token is multiplied by the weight
of its expert, y[t] = x[t] @ W[expert[t]]; fp16, many small experts (fine-grained MoE)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, num_experts, hidden, ffn):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(num_experts, hidden, ffn, dtype=torch.float16) * hidden ** -0.5)

    def forward(self, x, expert):
        out = x.new_empty(x.shape[0], self.weight.shape[2])
        for e in range(self.weight.shape[0]):
            sel = expert == e
            out[sel] = x[sel] @ self.weight[e]
        return out


tokens = 4096
num_experts = 64
hidden = 2048
ffn = 1408


def get_inputs():
    return [torch.randn(tokens, hidden, dtype=torch.float16), torch.randint(0, num_experts, (tokens,))]


def get_init_inputs():
    return [num_experts, hidden, ffn]


def get_cases():
    return [
        {"tokens": 4096, "num_experts": 64, "hidden": 2048, "ffn": 1408},
        {"tokens": 8192, "num_experts": 128, "hidden": 1024, "ffn": 512},
    ]


def get_test_cases():
    return [{"tokens": 40, "num_experts": 4, "hidden": 32, "ffn": 48},
            {"tokens": 70, "num_experts": 5, "hidden": 64, "ffn": 80}]
