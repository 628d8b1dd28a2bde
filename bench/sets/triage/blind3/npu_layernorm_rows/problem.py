"""LayerNorm with weight and bias over a hidden size that is not a power of two (1000/1536/2000
features of a tabular or speech model), Ascend; fp32."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(hidden, eps=1e-5)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.2, 0.2)

    def forward(self, x):
        return self.norm(x)


rows = 32768
hidden = 1000


def get_inputs():
    return [torch.randn(rows, hidden)]


def get_init_inputs():
    return [hidden]


def get_cases():
    return [{"rows": 32768, "hidden": 1000}, {"rows": 16384, "hidden": 2000}, {"rows": 65536, "hidden": 1536}]


def get_test_cases():
    return [{"rows": 45, "hidden": 200}]
