"""Token shift of an RWKV time-mix block: out[b, t] = x[b, t] + mu * (x[b, t-1] - x[b, t]), with
x[b, -1] = 0; per-channel mixing coefficients mu; fp16, on an Ascend NPU."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.mu = nn.Parameter(torch.rand(hidden, dtype=torch.float16))

    def forward(self, x):
        prev = torch.nn.functional.pad(x, (0, 0, 1, -1))
        return (x.float() + self.mu.float() * (prev.float() - x.float())).to(x.dtype)


batch = 8
seq_len = 4096
hidden = 2048


def get_inputs():
    return [torch.randn(batch, seq_len, hidden, dtype=torch.float16)]


def get_init_inputs():
    return [hidden]


def get_cases():
    return [{"batch": 8, "seq_len": 4096, "hidden": 2048}, {"batch": 16, "seq_len": 8192, "hidden": 1024},
            {"batch": 32, "seq_len": 1000, "hidden": 768}]


def get_test_cases():
    return [{"batch": 2, "seq_len": 9, "hidden": 64}, {"batch": 1, "seq_len": 20, "hidden": 32}]
