import torch
import torch.nn as nn
import torch_npu  # noqa: F401
import triton
import triton.language as tl


@triton.jit
def _token_shift_kernel(x_ptr, mu_ptr, out_ptr, seq_len, hidden, BLOCK_T: tl.constexpr, BLOCK_D: tl.constexpr):
    b = tl.program_id(0)
    t0 = tl.program_id(1) * BLOCK_T
    offs_t = t0 + tl.arange(0, BLOCK_T)
    offs_d = tl.arange(0, BLOCK_D)
    d_mask = offs_d < hidden
    mu = tl.load(mu_ptr + offs_d, mask=d_mask, other=0.0).to(tl.float32)
    base = b * seq_len * hidden
    ptrs = base + offs_t[:, None] * hidden + offs_d[None, :]
    mask = (offs_t[:, None] < seq_len) & d_mask[None, :]
    x = tl.load(x_ptr + ptrs, mask=mask, other=0.0).to(tl.float32)
    prev = tl.load(x_ptr + ptrs - hidden, mask=mask & (offs_t[:, None] > 0), other=0.0).to(tl.float32)
    out = x + mu[None, :] * (prev - x)
    tl.store(out_ptr + ptrs, out.to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.mu = nn.Parameter(torch.rand(hidden, dtype=torch.float16))

    def forward(self, x):
        batch, seq_len, hidden = x.shape
        out = torch.empty_like(x)
        BLOCK_D = triton.next_power_of_2(hidden)
        BLOCK_T = max(1, 16384 // BLOCK_D)
        _token_shift_kernel[(batch, triton.cdiv(seq_len, BLOCK_T))](x, self.mu, out, seq_len, hidden,
                                                                    BLOCK_T=BLOCK_T, BLOCK_D=BLOCK_D)
        return out
