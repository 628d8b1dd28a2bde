import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def count_tokens_kernel(ids_ptr, counts_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    expert = tl.load(ids_ptr + offs, mask=mask, other=0)
    tl.atomic_add(counts_ptr + expert, 1, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, num_experts):
        super().__init__()
        self.num_experts = num_experts

    def forward(self, expert_ids):
        ids = expert_ids.contiguous().view(-1)
        counts = torch.zeros(self.num_experts, device=ids.device, dtype=torch.int32)
        n = ids.numel()
        count_tokens_kernel[(triton.cdiv(n, 1024),)](ids, counts, n, BLOCK=1024)
        return counts.to(torch.int64)
