import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_pos_kernel(tok_ptr, pos_ptr, out_ptr, n, seq, hidden, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    s = (offs // hidden) % seq
    h = offs % hidden
    x = tl.load(tok_ptr + offs, mask=m, other=0.0)
    p = tl.load(pos_ptr + s * hidden + h, mask=m, other=0.0)
    tl.store(out_ptr + offs, x + p, mask=m)


class ModelNew(nn.Module):
    def __init__(self, max_seq, hidden):
        super().__init__()
        self.pos = nn.Parameter(torch.randn(max_seq, hidden, dtype=torch.float16) * 0.02)

    def forward(self, tok):
        B, S, H = tok.shape
        out = torch.empty_like(tok)
        n = tok.numel()
        add_pos_kernel[(triton.cdiv(n, 2048),)](tok, self.pos, out, n, S, H, BLOCK=2048, num_warps=8)
        return out
