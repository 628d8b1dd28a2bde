"""Imports its kernel and launcher from a file beside it (helper_kernels.py)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

from helper_kernels import scaled_add


class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        return scaled_add(x, y, self.alpha)
