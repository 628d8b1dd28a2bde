"""Entropy of each token's predictive distribution over a large vocabulary (an RL / PPO training
statistic and an entropy bonus): H = -sum softmax(x) * log_softmax(x); fp32 logits."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits):
        logp = torch.log_softmax(logits, dim=-1)
        return -(logp.exp() * logp).sum(dim=-1)


tokens = 2048
vocab = 151936


def get_inputs():
    return [torch.randn(tokens, vocab) * 3]


def get_init_inputs():
    return []


def get_cases():
    return [{"tokens": 2048, "vocab": 151936}, {"tokens": 4096, "vocab": 128256}, {"tokens": 1024, "vocab": 256000}]


def get_test_cases():
    return [{"tokens": 4, "vocab": 3000}]
