"""An autotuned kernel with several configs (benchmarked under the interpreter too) and a grid lambda."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 256}), triton.Config({"BLOCK": 512}), triton.Config({"BLOCK": 1024})],
                 key=["n"])
@triton.jit
def tuned_kernel(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + alpha * tl.load(y_ptr + offsets, mask=mask),
             mask=mask)


class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        out = torch.empty_like(x)
        n = x.numel()
        tuned_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, out, self.alpha, n)
        return out
