import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _embed_kernel(ids_ptr, w_ptr, out_ptr, hidden, BLOCK_H: tl.constexpr):
    token = tl.program_id(0)
    idx = tl.load(ids_ptr + token)
    for start in range(0, hidden, BLOCK_H):
        cols = start + tl.arange(0, BLOCK_H)
        mask = cols < hidden
        row = tl.load(w_ptr + idx * hidden + cols, mask=mask)
        tl.store(out_ptr + token * hidden + cols, row, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, vocab, hidden):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden, dtype=torch.bfloat16)

    def forward(self, ids):
        w = self.embed.weight
        hidden = w.shape[1]
        flat = ids.reshape(-1)
        out = torch.empty((flat.numel(), hidden), device=w.device, dtype=w.dtype)
        _embed_kernel[(flat.numel(),)](flat, w, out, hidden, BLOCK_H=1024, num_warps=4)
        return out.view(*ids.shape, hidden)
