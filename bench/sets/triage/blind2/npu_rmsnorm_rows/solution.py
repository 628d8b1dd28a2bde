import torch
import torch.nn as nn
import torch_npu  # noqa: F401
import triton
import triton.language as tl


def _vector_core_count(device):
    if device.type == "npu":
        props = triton.runtime.driver.active.utils.get_device_properties(device.index or 0)
        return props["num_vectorcore"]
    return 40


@triton.jit
def _rmsnorm_kernel(x_ptr, w_ptr, y_ptr, n_rows, n_cols, eps, NUM_CORES: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    for row in range(pid, n_rows, NUM_CORES):
        x_row = x_ptr + row * n_cols
        y_row = y_ptr + row * n_cols
        acc = tl.zeros((BLOCK,), dtype=tl.float32)
        for start in range(0, n_cols, BLOCK):
            x = tl.load(x_row + start + tl.arange(0, BLOCK)).to(tl.float32)
            acc += x * x
        rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            x = tl.load(x_row + cols).to(tl.float32)
            w = tl.load(w_ptr + cols).to(tl.float32)
            tl.store(y_row + cols, (x * rstd * w).to(tl.float16))


class ModelNew(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(hidden, dtype=torch.float16).uniform_(0.5, 1.5))
        self.eps = eps

    def forward(self, x):
        n_rows, n_cols = x.shape
        block = 1024
        assert n_cols % block == 0, "hidden size must be a multiple of 1024"
        y = torch.empty_like(x)
        cores = min(_vector_core_count(x.device), n_rows)
        _rmsnorm_kernel[(cores,)](x, self.weight, y, n_rows, n_cols, self.eps, NUM_CORES=cores, BLOCK=block)
        return y
