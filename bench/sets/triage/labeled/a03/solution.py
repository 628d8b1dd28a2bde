import torch
import torch.nn as nn
import torch_npu
import triton
import triton.language as tl


@triton.jit
def embedding_kernel(ids_ptr, table_ptr, out_ptr, n_tokens, DIM: tl.constexpr):
    core = tl.program_id(0)
    cols = tl.arange(0, DIM)
    for t in range(core, n_tokens, tl.num_programs(0)):
        row = tl.load(ids_ptr + t)
        vec = tl.load(table_ptr + row * DIM + cols)
        tl.store(out_ptr + t * DIM + cols, vec)


class ModelNew(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.table = nn.Embedding(vocab, dim)

    def forward(self, ids):
        dim = self.table.weight.shape[1]
        out = torch.empty((ids.numel(), dim), device=ids.device, dtype=self.table.weight.dtype)
        embedding_kernel[(40,)](ids, self.table.weight, out, ids.numel(), DIM=dim)
        return out
