"""Mixture-of-experts router: gate logits of each token for every expert, x @ W_gate.T (no bias), fp16."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden, num_experts):
        super().__init__()
        self.gate = nn.Linear(hidden, num_experts, bias=False, dtype=torch.float16)

    def forward(self, x):
        return self.gate(x)


tokens = 16384
hidden = 4096
num_experts = 64


def get_inputs():
    return [torch.randn(tokens, hidden, dtype=torch.float16)]


def get_init_inputs():
    return [hidden, num_experts]


def get_cases():
    return [
        {"tokens": 16384, "hidden": 4096, "num_experts": 64},
        {"tokens": 65536, "hidden": 2048, "num_experts": 64},
        {"tokens": 32768, "hidden": 4096, "num_experts": 8},
    ]


def get_test_cases():
    return [{"tokens": 40, "hidden": 64, "num_experts": 8}, {"tokens": 70, "hidden": 96, "num_experts": 16}]


def flops(case):
    return 2 * tokens * hidden * num_experts
