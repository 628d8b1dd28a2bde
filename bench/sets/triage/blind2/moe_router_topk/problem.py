"""Mixture-of-experts router: softmax over expert logits, top-k experts per token, weights
renormalised over the chosen k. Returns (weights fp32 [T, k], expert ids int32 [T, k])."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, top_k):
        super().__init__()
        self.top_k = top_k

    def forward(self, logits):
        probs = torch.softmax(logits.float(), dim=-1)
        weights, ids = torch.topk(probs, self.top_k, dim=-1)
        weights = weights / weights.sum(dim=-1, keepdim=True)
        return weights, ids.to(torch.int32)


tokens = 65536
experts = 128
top_k = 8


def get_inputs():
    return [torch.randn(tokens, experts, dtype=torch.float32)]


def get_init_inputs():
    return [top_k]


def get_cases():
    return [
        {"tokens": 65536, "experts": 128, "top_k": 8},
        {"tokens": 131072, "experts": 64, "top_k": 6},
        {"tokens": 50000, "experts": 256, "top_k": 8},
    ]


def get_test_cases():
    return [{"tokens": 70, "experts": 64, "top_k": 6}, {"tokens": 130, "experts": 128, "top_k": 8}]
