"""Number of routed token slots per expert (the counts used to size each expert's batch), from the
router's top-k expert ids [T, k] int32; int32 output [E]."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, num_experts):
        super().__init__()
        self.num_experts = num_experts

    def forward(self, topk_ids):
        return torch.bincount(topk_ids.reshape(-1).long(), minlength=self.num_experts).to(torch.int32)


tokens = 262144
top_k = 8
num_experts = 64


def get_inputs():
    return [torch.randint(0, num_experts, (tokens, top_k), dtype=torch.int32)]


def get_init_inputs():
    return [num_experts]


def get_cases():
    return [
        {"tokens": 262144, "top_k": 8, "num_experts": 64},
        {"tokens": 1048576, "top_k": 2, "num_experts": 8},
        {"tokens": 500000, "top_k": 6, "num_experts": 160},
    ]


def get_test_cases():
    return [{"tokens": 100, "top_k": 2, "num_experts": 8}, {"tokens": 300, "top_k": 6, "num_experts": 16}]
