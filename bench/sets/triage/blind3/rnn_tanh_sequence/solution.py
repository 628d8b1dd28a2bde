import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def elman_rnn_kernel(xw_ptr, w_ptr, h_ptr, steps, H: tl.constexpr):
    b = tl.program_id(0)
    i = tl.arange(0, H)
    j = tl.arange(0, H)
    w = tl.load(w_ptr + i[:, None] * H + j[None, :])
    h = tl.zeros((H,), dtype=tl.float32)
    base = b * steps * H
    for t in range(steps):
        pre = tl.load(xw_ptr + base + t * H + i) + tl.sum(w * h[None, :], axis=1)
        e = tl.exp(2.0 * pre)
        h_new = 1.0 - 2.0 / (e + 1.0)
        tl.store(h_ptr + base + t * H + i, h_new)
        h = h_new


class ModelNew(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.w_hh = nn.Parameter(torch.randn(hidden, hidden) / hidden ** 0.5)

    def forward(self, xw):
        batch, steps, hidden = xw.shape
        xw = xw.contiguous()
        out = torch.empty_like(xw)
        elman_rnn_kernel[(batch,)](xw, self.w_hh, out, steps, H=hidden, num_warps=4)
        return out
