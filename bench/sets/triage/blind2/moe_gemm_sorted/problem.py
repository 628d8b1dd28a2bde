"""Mixture-of-experts expert projection: each token is multiplied by the weight matrix of each of
its top-k experts and scaled by its routing weight. Inputs: hidden states [T, K] fp16, routing
(expert ids int32 [T, k], weights fp32 [T, k]); weights [E, N, K] fp16. Output [T, k, N] fp16."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, num_experts, in_features, out_features):
        super().__init__()
        self.w = nn.Parameter(torch.randn(num_experts, out_features, in_features, dtype=torch.float16) * in_features ** -0.5)

    def forward(self, x, topk_ids, topk_weights):
        t, k = topk_ids.shape
        out = torch.empty(t, k, self.w.shape[1], dtype=x.dtype, device=x.device)
        for e in range(self.w.shape[0]):
            tok, slot = (topk_ids == e).nonzero(as_tuple=True)
            y = (x[tok].float() @ self.w[e].float().t()) * topk_weights[tok, slot, None].float()
            out[tok, slot] = y.to(x.dtype)
        return out


tokens = 8192
num_experts = 8
top_k = 2
in_features = 4096
out_features = 14336


def get_inputs():
    x = torch.randn(tokens, in_features, dtype=torch.float16)
    scores = torch.rand(tokens, num_experts)
    topk_weights, topk_ids = scores.topk(top_k, dim=-1)
    return [x, topk_ids.to(torch.int32), topk_weights / topk_weights.sum(-1, keepdim=True)]


def get_init_inputs():
    return [num_experts, in_features, out_features]


def get_cases():
    return [
        {"tokens": 8192, "num_experts": 8, "top_k": 2, "in_features": 4096, "out_features": 14336},
        {"tokens": 16384, "num_experts": 64, "top_k": 6, "in_features": 2048, "out_features": 2816},
        {"tokens": 4000, "num_experts": 16, "top_k": 2, "in_features": 5120, "out_features": 8192},
    ]


def get_test_cases():
    return [
        {"tokens": 24, "num_experts": 4, "top_k": 2, "in_features": 64, "out_features": 48},
        {"tokens": 40, "num_experts": 8, "top_k": 2, "in_features": 128, "out_features": 64},
    ]


def flops(case):
    return 2 * case["tokens"] * case["top_k"] * case["in_features"] * case["out_features"]
