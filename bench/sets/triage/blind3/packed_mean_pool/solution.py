import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def pool_segment(h_ptr, out_ptr, start, length, hidden, BLOCK_T: tl.constexpr, BLOCK_H: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_H + tl.arange(0, BLOCK_H)
    acc = tl.zeros((BLOCK_T, BLOCK_H), dtype=tl.float32)
    for t in range(0, length, BLOCK_T):
        rows = start + t + tl.arange(0, BLOCK_T)
        m = (t + tl.arange(0, BLOCK_T))[:, None] < length
        acc += tl.load(h_ptr + rows[:, None] * hidden + cols[None, :], mask=m & (cols[None, :] < hidden), other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / length
    tl.store(out_ptr + cols, mean.to(tl.float16), mask=cols < hidden)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, hidden_states, cu_seqlens):
        hidden = hidden_states.shape[1]
        bounds = cu_seqlens.tolist()
        out = torch.empty((len(bounds) - 1, hidden), device=hidden_states.device, dtype=hidden_states.dtype)
        for i, (s, e) in enumerate(zip(bounds[:-1], bounds[1:])):
            pool_segment[(triton.cdiv(hidden, 256),)](hidden_states, out[i], s, e - s, hidden,
                                                      BLOCK_T=16, BLOCK_H=256, num_warps=4)
        return out
