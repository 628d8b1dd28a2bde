"""Per-token negative log-likelihood with ignored positions: loss[t] = -logp[t] where
labels[t] != -100, else 0 (labels int64 as produced by the data pipeline); on an Ascend NPU."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, target_logp, labels):
        return torch.where(labels != -100, -target_logp, torch.zeros_like(target_logp))


tokens = 4194304


def get_inputs():
    labels = torch.randint(0, 32000, (tokens,), dtype=torch.int64)
    labels[torch.rand(tokens) < 0.2] = -100
    return [-torch.rand(tokens) * 10, labels]


def get_init_inputs():
    return []


def get_cases():
    return [{"tokens": 4194304}, {"tokens": 1048576}, {"tokens": 6000000}]


def get_test_cases():
    return [{"tokens": 3000}, {"tokens": 1000}]
