import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def argmax_kernel(logits_ptr, out_ptr, V, stride_row, BLOCK_V: tl.constexpr):
    row = tl.program_id(0)
    base = logits_ptr + row * stride_row
    offs = tl.arange(0, BLOCK_V)
    best_val = -float("inf")
    best_idx = 0
    for start in range(0, V, BLOCK_V):
        cols = start + offs
        vals = tl.load(base + cols, mask=cols < V, other=-float("inf"))
        blk_max = tl.max(vals, axis=0)
        blk_idx = tl.argmax(vals, axis=0) + start
        take = blk_max > best_val
        best_idx = tl.where(take, blk_idx, best_idx)
        best_val = tl.where(take, blk_max, best_val)
    tl.store(out_ptr + row, best_idx.to(tl.int64))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits):
        logits = logits.contiguous()
        B, V = logits.shape
        out = torch.empty(B, device=logits.device, dtype=torch.int64)
        argmax_kernel[(B,)](logits, out, V, logits.stride(0), BLOCK_V=2048, num_warps=8)
        return out
