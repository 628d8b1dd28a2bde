"""EmbeddingBag(mode="sum") over variable-length bags (a bag-of-words text encoder); fp32 table."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.bag = nn.EmbeddingBag(vocab, dim, mode="sum")

    def forward(self, indices, offsets):
        return self.bag(indices, offsets)


vocab = 250000
dim = 768
bags = 16384
mean_bag = 24


def get_inputs():
    lengths = torch.randint(1, 2 * mean_bag, (bags,))
    offsets = torch.zeros(bags, dtype=torch.int64)
    offsets[1:] = torch.cumsum(lengths, 0)[:-1]
    indices = torch.randint(0, vocab, (int(lengths.sum()),))
    return [indices, offsets]


def get_init_inputs():
    return [vocab, dim]


def get_cases():
    return [
        {"vocab": 250000, "dim": 768, "bags": 16384, "mean_bag": 24},
        {"vocab": 100000, "dim": 1024, "bags": 8192, "mean_bag": 64},
        {"vocab": 500000, "dim": 512, "bags": 32768, "mean_bag": 16},
    ]


def get_test_cases():
    return [{"vocab": 300, "dim": 512, "bags": 5, "mean_bag": 12}]
