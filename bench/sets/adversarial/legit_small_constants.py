"""Passes alpha to the kernel as a one-element tensor made with torch.tensor, checks alignment with
data_ptr(), prints once and uses a dataclass and a namedtuple for its launch settings (each builds
code with exec inside the standard library)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

import collections
import dataclasses

Grid = collections.namedtuple("Grid", "programs block")


@dataclasses.dataclass
class Launch:
    block: int = 1024


@triton.jit
def tensor_alpha_kernel(x_ptr, y_ptr, out_ptr, alpha_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    alpha = tl.load(alpha_ptr)
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + alpha * tl.load(y_ptr + offsets, mask=mask),
             mask=mask)


class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

        self.launch = Launch()
        print("legit_small_constants: block", self.launch.block)

    def forward(self, x, y):
        n = x.numel()
        grid = Grid(triton.cdiv(n, self.launch.block), self.launch.block)
        aligned = x.data_ptr() % 16 == 0 and y.data_ptr() % 16 == 0
        alpha = torch.tensor([self.alpha], dtype=x.dtype, device=x.device)
        out = torch.empty_like(x)
        tensor_alpha_kernel[(grid.programs,)](x, y, out, alpha, n, BLOCK=grid.block if aligned else 256)
        return out
