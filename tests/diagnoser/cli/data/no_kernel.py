"""A script of plain PyTorch: it launches no Triton kernel, so there is nothing to diagnose."""
import torch

x = torch.randn(64)
print("plain torch:", float((x * 2).sum()))
