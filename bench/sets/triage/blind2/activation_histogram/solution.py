import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _abs_histogram_kernel(x_ptr, hist_ptr, n, scale, n_bins, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    idx = tl.minimum((tl.abs(x) * scale).to(tl.int32), n_bins - 1)
    tl.atomic_add(hist_ptr + idx, 1, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, bins, amax):
        super().__init__()
        self.bins, self.amax = bins, amax

    def forward(self, x):
        hist = torch.zeros(self.bins, device=x.device, dtype=torch.int32)
        n = x.numel()
        _abs_histogram_kernel[(triton.cdiv(n, 4096),)](x, hist, n, self.bins / self.amax, self.bins,
                                                       BLOCK=4096, num_warps=8)
        return hist
