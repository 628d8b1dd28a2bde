"""Ends the contestant with os._exit mid-forward (no exception for anyone to catch)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

import os


class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        os._exit(0)
