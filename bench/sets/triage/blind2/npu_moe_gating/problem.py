"""Router of a 60-expert MoE layer (Qwen1.5-MoE style): softmax over the 60 expert logits, top-4
experts per token (weights not renormalised); on an Ascend NPU. Returns (weights fp32 [T, 4],
ids int32 [T, 4])."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, top_k):
        super().__init__()
        self.top_k = top_k

    def forward(self, logits):
        probs = torch.softmax(logits.float(), dim=-1)
        w, ids = torch.topk(probs, self.top_k, dim=-1)
        return w, ids.to(torch.int32)


tokens = 65536
experts = 60
top_k = 4


def get_inputs():
    return [torch.randn(tokens, experts, dtype=torch.float32)]


def get_init_inputs():
    return [top_k]


def get_cases():
    return [{"tokens": 65536}, {"tokens": 16384}, {"tokens": 100000}]


def get_test_cases():
    return [{"tokens": 40}, {"tokens": 70}]
