import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_norm_kernel(x_ptr, norm_ptr, D, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, D, BLOCK):
        x = tl.load(x_ptr + row * stride + start + offs, mask=start + offs < D, other=0.0)
        acc += x * x
    tl.store(norm_ptr + row, tl.sqrt(tl.sum(acc, axis=0)))


@triton.jit
def scale_rows_kernel(x_ptr, norm_ptr, y_ptr, D, stride, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < D
    denom = tl.maximum(tl.load(norm_ptr + row), eps)
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * stride + cols, x / denom, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        R, D = x.shape
        norms = torch.empty(R, device=x.device, dtype=torch.float32)
        row_norm_kernel[(R,)](x, norms, D, x.stride(0), BLOCK=1024)
        y = torch.empty_like(x)
        scale_rows_kernel[(R, triton.cdiv(D, 1024))](x, norms, y, D, x.stride(0), 1e-12, BLOCK=1024)
        return y
