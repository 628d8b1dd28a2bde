import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def bag_sum_kernel(idx_ptr, bounds_ptr, table_ptr, out_ptr, dim,
                   BLOCK_I: tl.constexpr, BLOCK_D: tl.constexpr):
    bag = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    col_ok = cols < dim
    start = tl.load(bounds_ptr + bag).to(tl.int32)
    end = tl.load(bounds_ptr + bag + 1).to(tl.int32)
    acc = tl.zeros((BLOCK_I, BLOCK_D), dtype=tl.float32)
    for i in range(start, end, BLOCK_I):
        pos = i + tl.arange(0, BLOCK_I)
        live = pos < end
        rows = tl.load(idx_ptr + pos, mask=live, other=0).to(tl.int32)
        tile = tl.load(table_ptr + rows[:, None] * dim + cols[None, :],
                       mask=live[:, None] & col_ok[None, :], other=0.0)
        acc += tile
    tl.store(out_ptr + bag * dim + cols, tl.sum(acc, axis=0), mask=col_ok)


class ModelNew(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.bag = nn.EmbeddingBag(vocab, dim, mode="sum")

    def forward(self, indices, offsets):
        table = self.bag.weight
        n_bags, dim = offsets.numel(), table.shape[1]
        bounds = torch.cat([offsets, offsets.new_tensor([indices.numel()])])
        out = torch.empty((n_bags, dim), device=table.device, dtype=table.dtype)
        bag_sum_kernel[(n_bags, triton.cdiv(dim, 256))](indices, bounds, table, out, dim,
                                                        BLOCK_I=8, BLOCK_D=256, num_warps=4)
        return out
