import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _rmsnorm_quant_kernel(x_ptr, w_ptr, q_ptr, stride_x, stride_q, n_cols, eps, inv_scale,
                          BLOCK: tl.constexpr, CHUNK: tl.constexpr):
    row = tl.program_id(0)
    col_block = tl.program_id(1)
    x_row = x_ptr + row * stride_x
    sq = tl.zeros((CHUNK,), dtype=tl.float32)
    for start in range(0, n_cols, CHUNK):
        c = start + tl.arange(0, CHUNK)
        v = tl.load(x_row + c, mask=c < n_cols, other=0.0).to(tl.float32)
        sq += v * v
    rstd = tl.rsqrt(tl.sum(sq, axis=0) / n_cols + eps)

    cols = col_block * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    y = x * rstd * w * inv_scale
    y = tl.where(y >= 0, tl.floor(y + 0.5), tl.ceil(y - 0.5))
    y = tl.minimum(tl.maximum(y, -127.0), 127.0)
    tl.store(q_ptr + row * stride_q + cols, y.to(tl.int8), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden, eps, scale):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(hidden, dtype=torch.bfloat16).uniform_(0.5, 1.5))
        self.eps, self.scale = eps, scale

    def forward(self, x):
        n_rows, n_cols = x.shape
        q = torch.empty((n_rows, n_cols), device=x.device, dtype=torch.int8)
        BLOCK = 1024
        _rmsnorm_quant_kernel[(n_rows, triton.cdiv(n_cols, BLOCK))](
            x, self.weight, q, x.stride(0), q.stride(0), n_cols, self.eps, 1.0 / self.scale,
            BLOCK=BLOCK, CHUNK=2048, num_warps=4)
        return q
