"""Mean pooling of each sequence of a packed (varlen) batch of token states, given the sequences'
cumulative lengths, as for sentence embeddings; fp16 states, hidden 1024."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, hidden_states, cu_seqlens):
        bounds = cu_seqlens.tolist()
        pooled = [hidden_states[s:e].float().mean(dim=0) for s, e in zip(bounds[:-1], bounds[1:])]
        return torch.stack(pooled).to(hidden_states.dtype)


sequences = 128
mean_len = 200
hidden = 1024


def get_inputs():
    lengths = torch.randint(mean_len // 4, 2 * mean_len, (sequences,))
    cu = torch.zeros(sequences + 1, dtype=torch.int32)
    cu[1:] = torch.cumsum(lengths, 0)
    return [torch.randn(int(cu[-1]), hidden, dtype=torch.float16), cu]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"sequences": 128, "mean_len": 200, "hidden": 1024},
        {"sequences": 256, "mean_len": 64, "hidden": 1024},
        {"sequences": 64, "mean_len": 500, "hidden": 768},
    ]


def get_test_cases():
    return [{"sequences": 3, "mean_len": 8, "hidden": 256}]
