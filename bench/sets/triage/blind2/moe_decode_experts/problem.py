"""Mixture-of-experts expert projection for a decode batch: every token goes through its top-k
experts' weight matrices, the outputs weighted by the routing weights and summed. Many small
experts (fine-grained MoE). x [T, K] bf16, expert weights [E, N, K] bf16, routing ids/weights
[T, k]; output [T, N] bf16."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, num_experts, in_features, out_features):
        super().__init__()
        self.w = nn.Parameter(torch.randn(num_experts, out_features, in_features, dtype=torch.bfloat16) * in_features ** -0.5)

    def forward(self, x, topk_ids, topk_weights):
        out = torch.zeros(x.shape[0], self.w.shape[1], dtype=torch.float32, device=x.device)
        for e in range(self.w.shape[0]):
            tok, slot = (topk_ids == e).nonzero(as_tuple=True)
            if tok.numel():
                y = x[tok].float() @ self.w[e].float().t()
                out.index_add_(0, tok, y * topk_weights[tok, slot, None].float())
        return out.to(x.dtype)


tokens = 64
num_experts = 128
top_k = 8
in_features = 2048
out_features = 1536


def get_inputs():
    x = torch.randn(tokens, in_features, dtype=torch.bfloat16)
    scores = torch.rand(tokens, num_experts)
    topk_weights, topk_ids = scores.topk(top_k, dim=-1)
    return [x, topk_ids.to(torch.int32), topk_weights / topk_weights.sum(-1, keepdim=True)]


def get_init_inputs():
    return [num_experts, in_features, out_features]


def get_cases():
    return [
        {"tokens": 64, "num_experts": 128, "top_k": 8, "in_features": 2048, "out_features": 1536},
        {"tokens": 32, "num_experts": 64, "top_k": 6, "in_features": 2048, "out_features": 1408},
        {"tokens": 128, "num_experts": 160, "top_k": 6, "in_features": 5120, "out_features": 1536},
    ]


def get_test_cases():
    return [{"tokens": 6, "num_experts": 8, "top_k": 2, "in_features": 64, "out_features": 48}]
