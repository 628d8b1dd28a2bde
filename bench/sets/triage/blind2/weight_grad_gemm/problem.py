"""Weight gradient of a linear layer: dW = dY^T @ X over all tokens of a training batch
([T, N]^T @ [T, K] -> [N, K]), bf16 inputs, fp32 gradient."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, grad_out, x):
        return grad_out.float().t() @ x.float()


tokens = 65536
out_features = 1024
in_features = 1024


def get_inputs():
    return [torch.randn(tokens, out_features, dtype=torch.bfloat16), torch.randn(tokens, in_features, dtype=torch.bfloat16)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"tokens": 65536, "out_features": 1024, "in_features": 1024},
        {"tokens": 131072, "out_features": 768, "in_features": 768},
        {"tokens": 32768, "out_features": 1536, "in_features": 1024},
    ]


def get_test_cases():
    return [{"tokens": 200, "out_features": 64, "in_features": 96}, {"tokens": 128, "out_features": 128, "in_features": 128}]


def flops(case):
    return 2 * case["tokens"] * case["out_features"] * case["in_features"]
