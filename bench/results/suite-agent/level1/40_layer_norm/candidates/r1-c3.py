"""LayerNorm in the style of the Triton tutorial: one program per sample, three passes over the row
in 1024-element chunks (mean, variance, normalise + affine)."""
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({'BLOCK_SIZE': 1024}, num_warps=4, num_stages=3),
        triton.Config({'BLOCK_SIZE': 512}, num_warps=4, num_stages=3),
        triton.Config({'BLOCK_SIZE': 512}, num_warps=8, num_stages=3),
        triton.Config({'BLOCK_SIZE': 1024}, num_warps=8, num_stages=3),
        triton.Config({'BLOCK_SIZE': 2048}, num_warps=4, num_stages=3),
        triton.Config({'BLOCK_SIZE': 2048}, num_warps=8, num_stages=3),
        triton.Config({'BLOCK_SIZE': 4096}, num_warps=4, num_stages=3),
        triton.Config({'BLOCK_SIZE': 4096}, num_warps=8, num_stages=3),
    ],
    key=['n_cols'],
)
@triton.jit
def layer_norm_kernel(x_ptr, y_ptr, w_ptr, b_ptr, n_cols, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * n_cols
    y_row = y_ptr + row * n_cols
    cols = tl.arange(0, BLOCK_SIZE)

    acc = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    acc_count = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    acc_mean = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    acc_m2 = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_SIZE):
        x = tl.load(x_row + start + cols, mask=start + cols < n_cols, other=0.0)
        acc += x
        acc_valid = start + cols < n_cols
        acc_count += tl.where(acc_valid, 1.0, 0.0)
        acc_delta = tl.where(acc_valid, x - acc_mean, 0.0)
        acc_mean += acc_delta / tl.maximum(acc_count, 1.0)
        acc_m2 += acc_delta * tl.where(acc_valid, x - acc_mean, 0.0)
    mean = tl.sum(acc, axis=0) / n_cols

    acc = acc_m2 + acc_count * (acc_mean - mean) * (acc_mean - mean)
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)

    for start in range(0, n_cols, BLOCK_SIZE):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=0.0)
        w = tl.load(w_ptr + start + cols, mask=mask, other=0.0)
        b = tl.load(b_ptr + start + cols, mask=mask, other=0.0)
        tl.store(y_row + start + cols, (x - mean) * rstd * w + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, normalized_shape: tuple):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)
        with torch.no_grad():
            self.ln.weight.uniform_(0.5, 1.5)
            self.ln.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n_cols = math.prod(self.ln.normalized_shape)
        n_rows = x.numel() // n_cols
        y = torch.empty_like(x)
        layer_norm_kernel[(n_rows,)](x, y, self.ln.weight, self.ln.bias, n_cols, self.ln.eps)
        return y
