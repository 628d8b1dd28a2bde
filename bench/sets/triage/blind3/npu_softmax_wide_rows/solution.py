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
def softmax_rows_kernel(x_ptr, y_ptr, n_rows, N: tl.constexpr):
    pid = tl.program_id(0)
    step = tl.num_programs(0)
    cols = tl.arange(0, N)
    for row in range(pid, n_rows, step):
        x = tl.load(x_ptr + row * N + cols)
        e = tl.exp(x - tl.max(x, axis=0))
        tl.store(y_ptr + row * N + cols, e / tl.sum(e, axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        rows, cols = x.shape
        y = torch.empty_like(x)
        softmax_rows_kernel[(_vector_cores(),)](x, y, rows, N=cols)
        return y
