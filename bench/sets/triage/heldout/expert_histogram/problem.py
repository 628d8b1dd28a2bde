"""Tokens per expert after top-k routing: a histogram of int32 expert ids (int64 counts)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, num_experts):
        super().__init__()
        self.num_experts = num_experts

    def forward(self, expert_ids):
        return torch.bincount(expert_ids.flatten().long(), minlength=self.num_experts)


tokens = 65536
top_k = 8
num_experts = 64


def get_inputs():
    return [torch.randint(0, num_experts, (tokens, top_k), dtype=torch.int32)]


def get_init_inputs():
    return [num_experts]


def get_cases():
    return [
        {"tokens": 65536, "top_k": 8, "num_experts": 64},
        {"tokens": 262144, "top_k": 2, "num_experts": 8},
    ]


def get_test_cases():
    return [{"tokens": 100, "top_k": 2, "num_experts": 8}, {"tokens": 300, "top_k": 4, "num_experts": 16}]
