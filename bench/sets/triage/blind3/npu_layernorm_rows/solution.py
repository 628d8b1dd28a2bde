import torch
import torch_npu
import torch.nn as nn
import triton
import triton.language as tl


def _vector_cores():
    try:
        props = triton.runtime.driver.active.utils.get_device_properties(torch.npu.current_device())
        return props["num_vectorcore"]
    except (AttributeError, RuntimeError, KeyError):
        return 40


@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_rows, n_cols, eps, BLOCK_N: tl.constexpr):
    cols = tl.arange(0, BLOCK_N)
    valid = cols < n_cols
    keep = valid.to(tl.float32)
    w = tl.load(w_ptr + cols, mask=valid, other=0.0)
    b = tl.load(b_ptr + cols, mask=valid, other=0.0)
    for row in range(tl.program_id(0), n_rows, tl.num_programs(0)):
        x = tl.load(x_ptr + row * n_cols + cols, mask=valid, other=0.0)
        mean = tl.sum(x, axis=0) / n_cols
        xc = (x - mean) * keep
        rstd = 1.0 / tl.sqrt(tl.sum(xc * xc, axis=0) / n_cols + eps)
        tl.store(y_ptr + row * n_cols + cols, xc * rstd * w + b, mask=valid)


class ModelNew(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(hidden, eps=1e-5)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.2, 0.2)

    def forward(self, x):
        rows, cols = x.shape
        y = torch.empty_like(x)
        layernorm_kernel[(_vector_cores(),)](x, self.norm.weight, self.norm.bias, y, rows, cols, self.norm.eps,
                                             BLOCK_N=triton.next_power_of_2(cols))
        return y
