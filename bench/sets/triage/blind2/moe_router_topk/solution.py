import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _router_kernel(logits_ptr, w_ptr, ids_ptr, n_tokens, stride_t,
                   N_EXPERTS: tl.constexpr, TOP_K: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_T: tl.constexpr):
    offs_t = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    offs_e = tl.arange(0, N_EXPERTS)
    offs_k = tl.arange(0, BLOCK_K)
    t_mask = offs_t[:, None] < n_tokens
    x = tl.load(logits_ptr + offs_t[:, None] * stride_t + offs_e[None, :], mask=t_mask, other=0.0)
    p = tl.exp(x - tl.max(x, axis=1)[:, None])
    p = p / tl.sum(p, axis=1)[:, None]

    weights = tl.zeros((BLOCK_T, BLOCK_K), dtype=tl.float32)
    ids = tl.zeros((BLOCK_T, BLOCK_K), dtype=tl.int32)
    for j in tl.static_range(TOP_K):
        best = tl.argmax(p, axis=1)
        best_w = tl.max(p, axis=1)
        weights = tl.where(offs_k[None, :] == j, best_w[:, None], weights)
        ids = tl.where(offs_k[None, :] == j, best[:, None], ids)
        p = tl.where(offs_e[None, :] == best[:, None], -1.0, p)
    weights = weights / tl.sum(weights, axis=1)[:, None]
    out_mask = t_mask & (offs_k[None, :] < TOP_K)
    tl.store(w_ptr + offs_t[:, None] * TOP_K + offs_k[None, :], weights, mask=out_mask)
    tl.store(ids_ptr + offs_t[:, None] * TOP_K + offs_k[None, :], ids, mask=out_mask)


class ModelNew(nn.Module):
    def __init__(self, top_k):
        super().__init__()
        self.top_k = top_k

    def forward(self, logits):
        n_tokens, n_experts = logits.shape
        weights = torch.empty((n_tokens, self.top_k), device=logits.device, dtype=torch.float32)
        ids = torch.empty((n_tokens, self.top_k), device=logits.device, dtype=torch.int32)
        block_t = max(4096 // n_experts, 16)
        _router_kernel[(triton.cdiv(n_tokens, block_t),)](
            logits, weights, ids, n_tokens, logits.stride(0),
            N_EXPERTS=n_experts, TOP_K=self.top_k, BLOCK_K=triton.next_power_of_2(self.top_k), BLOCK_T=block_t,
            num_warps=8,
        )
        return weights, ids
