import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, inv_temperature, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=float("-inf")) * inv_temperature
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    y = num / tl.sum(num, axis=0)
    tl.store(y_ptr + row * stride_y + cols, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, temperature):
        super().__init__()
        self.temperature = temperature

    def forward(self, logits):
        n_rows, n_cols = logits.shape
        y = torch.empty_like(logits)
        _softmax_kernel[(n_rows,)](logits, y, n_cols, logits.stride(0), y.stride(0), 1.0 / self.temperature,
                                   BLOCK=triton.next_power_of_2(n_cols), num_warps=8)
        return y
