"""A linear layer applied to a subset of tokens picked by index (e.g. the tokens a capacity-limited
router kept, or the masked positions of an MLM head); bf16."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden, out_features):
        super().__init__()
        self.fc = nn.Linear(hidden, out_features, bias=False, dtype=torch.bfloat16)

    def forward(self, x, token_ids):
        return self.fc(x[token_ids])


tokens = 32768
picked = 8192
hidden = 4096
out_features = 14336


def get_inputs():
    x = torch.randn(tokens, hidden, dtype=torch.bfloat16)
    token_ids = torch.randperm(tokens)[:picked].sort().values
    return [x, token_ids]


def get_init_inputs():
    return [hidden, out_features]


def get_cases():
    return [
        {"tokens": 32768, "picked": 8192, "hidden": 4096, "out_features": 14336},
        {"tokens": 16384, "picked": 12288, "hidden": 5120, "out_features": 5120},
        {"tokens": 65536, "picked": 4096, "hidden": 2048, "out_features": 8192},
    ]


def get_test_cases():
    return [{"tokens": 100, "picked": 37, "hidden": 96, "out_features": 80}]


def flops(case):
    return 2 * case["picked"] * case["hidden"] * case["out_features"]
