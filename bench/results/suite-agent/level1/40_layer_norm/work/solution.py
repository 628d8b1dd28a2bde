"""LayerNorm over very long rows, split across many programs per row.

The initial kernel gave each sample one program (16 programs for 16 samples of 4M elements: a
handful of SMs busy, the rest idle) and read each row three times. Here two launches share the row:

1. every (row, chunk) program reduces its chunk to a count-free mean and M2 (sum of squared
   deviations from the chunk's own mean: no E[x^2]-E[x]^2 cancellation);
2. every (row, chunk) program combines its row's chunk statistics (Chan's parallel formula), then
   normalises its chunk with the affine transform. Row is the fastest launch axis, so the programs
   of one chunk of weight and bias run together and read it from L2 once for all rows.

x is read twice and y written once (the floor reads once and writes once).
"""
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl

CHUNK = 4096


@triton.jit
def chunk_stats_kernel(x_ptr, mean_ptr, m2_ptr, n_cols, n_chunks, CHUNK: tl.constexpr):
    row = tl.program_id(0)
    chunk = tl.program_id(1)
    cols = chunk * CHUNK + tl.arange(0, CHUNK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row.to(tl.int64) * n_cols + cols, mask=mask, other=0.0)
    count = tl.minimum(n_cols - chunk * CHUNK, CHUNK).to(tl.float32)
    mean = tl.sum(x, axis=0) / count
    diff = tl.where(mask, x - mean, 0.0)
    tl.store(mean_ptr + row * n_chunks + chunk, mean)
    tl.store(m2_ptr + row * n_chunks + chunk, tl.sum(diff * diff, axis=0))


@triton.jit
def normalize_kernel(x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, m2_ptr, n_cols, n_chunks, eps,
                     CHUNK: tl.constexpr, MAX_CHUNKS: tl.constexpr):
    row = tl.program_id(0)
    chunk = tl.program_id(1)
    ids = tl.arange(0, MAX_CHUNKS)
    present = ids < n_chunks
    means = tl.load(mean_ptr + row * n_chunks + ids, mask=present, other=0.0)
    m2s = tl.load(m2_ptr + row * n_chunks + ids, mask=present, other=0.0)
    counts = tl.where(present, tl.minimum(n_cols - ids * CHUNK, CHUNK), 0).to(tl.float32)
    mean = tl.sum(counts * means, axis=0) / n_cols
    shift = means - mean
    m2 = tl.sum(m2s + counts * shift * shift, axis=0)
    rstd = 1.0 / tl.sqrt(m2 / n_cols + eps)

    cols = chunk * CHUNK + tl.arange(0, CHUNK)
    mask = cols < n_cols
    offset = row.to(tl.int64) * n_cols + cols
    x = tl.load(x_ptr + offset, mask=mask, other=0.0)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + offset, (x - mean) * rstd * w + b, mask=mask)


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
        n_chunks = triton.cdiv(n_cols, CHUNK)
        y = torch.empty_like(x)
        means = torch.empty((n_rows, n_chunks), device=x.device, dtype=torch.float32)
        m2s = torch.empty_like(means)
        grid = (n_rows, n_chunks)
        chunk_stats_kernel[grid](x, means, m2s, n_cols, n_chunks, CHUNK=CHUNK, num_warps=8)
        normalize_kernel[grid](x, y, self.ln.weight, self.ln.bias, means, m2s, n_cols, n_chunks,
                               self.ln.eps, CHUNK=CHUNK, MAX_CHUNKS=triton.next_power_of_2(n_chunks),
                               num_warps=8)
        return y
