import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _embedding_kernel(ids_ptr, table_ptr, out_ptr, n_tokens, hidden, stride_table, stride_out,
                      BLOCK_T: tl.constexpr, BLOCK_D: tl.constexpr):
    offs_t = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    offs_d = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    t_mask = offs_t < n_tokens
    ids = tl.load(ids_ptr + offs_t, mask=t_mask, other=0).to(tl.int32)
    mask = t_mask[:, None] & (offs_d[None, :] < hidden)
    rows = tl.load(table_ptr + ids[:, None] * stride_table + offs_d[None, :], mask=mask, other=0.0)
    tl.store(out_ptr + offs_t[:, None] * stride_out + offs_d[None, :], rows, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, vocab, hidden):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden, dtype=torch.bfloat16)

    def forward(self, ids):
        table = self.embed.weight
        hidden = table.shape[1]
        flat = ids.reshape(-1)
        out = torch.empty((flat.numel(), hidden), device=table.device, dtype=table.dtype)
        block_t, block_d = 16, 512
        grid = (triton.cdiv(flat.numel(), block_t), triton.cdiv(hidden, block_d))
        _embedding_kernel[grid](flat, table, out, flat.numel(), hidden, table.stride(0), out.stride(0),
                                BLOCK_T=block_t, BLOCK_D=block_d, num_warps=8)
        return out.view(*ids.shape, hidden)
