"""Row softmax over the last dimension in fp32, in sizes where one forward takes well over launch
overhead on an H200 (a pair for `ladder bench --backend cuda`)."""
import torch
import torch.nn as nn

ROWS, COLS = 8192, 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []


def get_cases():
    return [{"ROWS": 8192, "COLS": 4096}, {"ROWS": 16384, "COLS": 1000}, {"ROWS": 4096, "COLS": 8192}]


def bytes(case):
    return 2 * 4 * ROWS * COLS
