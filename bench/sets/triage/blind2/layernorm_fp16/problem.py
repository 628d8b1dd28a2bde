"""LayerNorm over the hidden axis with affine weight and bias, fp16 activations."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.ln = nn.LayerNorm(hidden, eps=eps, dtype=torch.float16)
        with torch.no_grad():
            self.ln.weight.uniform_(0.5, 1.5)
            self.ln.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        return torch.nn.functional.layer_norm(x.float(), self.ln.normalized_shape, self.ln.weight.float(),
                                              self.ln.bias.float(), self.ln.eps).to(x.dtype)


tokens = 32768
hidden = 4096
eps = 1e-5


def get_inputs():
    return [torch.randn(tokens, hidden, dtype=torch.float16) * 2 + 0.5]


def get_init_inputs():
    return [hidden, eps]


def get_cases():
    return [{"tokens": 32768, "hidden": 4096}, {"tokens": 16384, "hidden": 8192}, {"tokens": 20000, "hidden": 5120}]


def get_test_cases():
    return [{"tokens": 4, "hidden": 3000}, {"tokens": 3, "hidden": 1024}]
