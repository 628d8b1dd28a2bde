import torch
import torch.nn as nn
import torch_npu  # noqa: F401
import triton
import triton.language as tl


@triton.jit
def _gating_kernel(logits_ptr, w_ptr, ids_ptr, n_tokens, n_experts,
                   TOP_K: tl.constexpr, BLOCK_T: tl.constexpr, BLOCK_E: tl.constexpr):
    offs_t = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    offs_e = tl.arange(0, BLOCK_E)
    mask = (offs_t[:, None] < n_tokens) & (offs_e[None, :] < n_experts)
    x = tl.load(logits_ptr + offs_t[:, None] * n_experts + offs_e[None, :], mask=mask, other=float("-inf"))
    p = tl.exp(x - tl.max(x, axis=1)[:, None])
    p = p / tl.sum(p, axis=1)[:, None]
    for j in tl.static_range(TOP_K):
        best = tl.max(p, axis=1)
        best_id = tl.argmax(p, axis=1)
        tl.store(w_ptr + offs_t * TOP_K + j, best, mask=offs_t < n_tokens)
        tl.store(ids_ptr + offs_t * TOP_K + j, best_id, mask=offs_t < n_tokens)
        p = tl.where(offs_e[None, :] == best_id[:, None], -1.0, p)


class ModelNew(nn.Module):
    def __init__(self, top_k):
        super().__init__()
        self.top_k = top_k

    def forward(self, logits):
        n_tokens, n_experts = logits.shape
        w = torch.empty((n_tokens, self.top_k), device=logits.device, dtype=torch.float32)
        ids = torch.empty((n_tokens, self.top_k), device=logits.device, dtype=torch.int32)
        BLOCK_T = 32
        _gating_kernel[(triton.cdiv(n_tokens, BLOCK_T),)](logits, w, ids, n_tokens, n_experts, TOP_K=self.top_k,
                                                          BLOCK_T=BLOCK_T, BLOCK_E=triton.next_power_of_2(n_experts))
        return w, ids
