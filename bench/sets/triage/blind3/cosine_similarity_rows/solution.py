import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def cosine_rows_kernel(a_ptr, b_ptr, out_ptr, D, stride_a, stride_b, eps, CHUNK: tl.constexpr):
    r = tl.program_id(0)
    dot = 0.0
    aa = 0.0
    bb = 0.0
    for start in range(0, D, CHUNK):
        cols = start + tl.arange(0, CHUNK)
        m = cols < D
        x = tl.load(a_ptr + r * stride_a + cols, mask=m, other=0.0)
        y = tl.load(b_ptr + r * stride_b + cols, mask=m, other=0.0)
        dot += tl.sum(x * y, axis=0)
        aa += tl.sum(x * x, axis=0)
        bb += tl.sum(y * y, axis=0)
    denom = tl.maximum(tl.sqrt(aa) * tl.sqrt(bb), eps)
    tl.store(out_ptr + r, dot / denom)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        rows, dim = a.shape
        out = torch.empty(rows, device=a.device, dtype=a.dtype)
        cosine_rows_kernel[(rows,)](a, b, out, dim, a.stride(0), b.stride(0), 1e-8, CHUNK=2048, num_warps=8)
        return out
