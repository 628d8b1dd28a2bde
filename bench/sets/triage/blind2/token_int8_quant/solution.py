import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _per_token_quant_kernel(x_ptr, q_ptr, scale_ptr, n_cols, stride_x, stride_q, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    scale = tl.maximum(tl.max(tl.abs(x), axis=0), 1e-10) / 127.0
    q = x / scale
    q = tl.where(q >= 0, tl.floor(q + 0.5), tl.ceil(q - 0.5))
    q = tl.minimum(tl.maximum(q, -127.0), 127.0)
    tl.store(q_ptr + row * stride_q + cols, q.to(tl.int8), mask=mask)
    tl.store(scale_ptr + row, scale)


class ModelNew(nn.Module):
    def forward(self, x):
        n_rows, n_cols = x.shape
        q = torch.empty((n_rows, n_cols), device=x.device, dtype=torch.int8)
        scale = torch.empty((n_rows, 1), device=x.device, dtype=torch.float32)
        _per_token_quant_kernel[(n_rows,)](x, q, scale, n_cols, x.stride(0), q.stride(0),
                                           BLOCK=triton.next_power_of_2(n_cols))
        return q, scale
