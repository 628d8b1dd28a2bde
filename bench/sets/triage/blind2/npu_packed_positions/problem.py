"""Position ids for packed variable-length sequences: token t of the packed batch gets its offset
within its own sequence, given the int64 cumulative sequence lengths (cu_seqlens, [S + 1]);
int64 output [T]; on an Ascend NPU."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, cu_seqlens, like):
        total = like.shape[0]
        t = torch.arange(total, dtype=torch.int64, device=cu_seqlens.device)
        seq = torch.searchsorted(cu_seqlens[1:], t, right=True)
        return t - cu_seqlens[seq]


num_seqs = 64
total_tokens = 262144


def get_inputs():
    lengths = torch.randint(1, 2 * total_tokens // num_seqs, (num_seqs,))
    lengths = (lengths.double() * total_tokens / lengths.sum()).long().clamp(min=1)
    lengths[-1] += total_tokens - lengths.sum()
    cu = torch.zeros(num_seqs + 1, dtype=torch.int64)
    cu[1:] = torch.cumsum(lengths, 0)
    return [cu, torch.empty(total_tokens, dtype=torch.int8)]


def get_init_inputs():
    return []


def get_cases():
    return [{"num_seqs": 64, "total_tokens": 262144}, {"num_seqs": 256, "total_tokens": 1048576},
            {"num_seqs": 16, "total_tokens": 131072}]


def get_test_cases():
    return [{"num_seqs": 5, "total_tokens": 3000}, {"num_seqs": 3, "total_tokens": 1000}]
