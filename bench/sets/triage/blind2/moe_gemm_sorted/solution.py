import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _fused_moe_kernel(a_ptr, w_ptr, c_ptr, topk_weights_ptr, sorted_ids_ptr, expert_ids_ptr,
                      N, K, num_valid, top_k, stride_am, stride_we, stride_wn, stride_cm,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_token_id = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_token = tl.load(sorted_ids_ptr + offs_token_id)
    token_mask = offs_token < num_valid
    expert = tl.load(expert_ids_ptr + pid_m)

    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_token[:, None] // top_k) * stride_am + offs_k[None, :]
    w_ptrs = w_ptr + expert * stride_we + offs_n[None, :] * stride_wn + offs_k[:, None]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=token_mask[:, None] & (offs_k[None, :] < k_left), other=0.0)
        w = tl.load(w_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, w, acc)
        a_ptrs += BLOCK_K
        w_ptrs += BLOCK_K
    weight = tl.load(topk_weights_ptr + offs_token, mask=token_mask, other=0.0)
    acc = acc * weight[:, None]
    c_ptrs = c_ptr + offs_token[:, None] * stride_cm + offs_n[None, :]
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=token_mask[:, None] & (offs_n[None, :] < N))


def _align_by_expert(topk_ids, num_experts, block_m):
    """Token-slot ids sorted by expert, each expert's run padded to a multiple of block_m with an
    out-of-range id, and the expert of every block of block_m slots."""
    flat = topk_ids.reshape(-1).to(torch.int64)
    num_valid = flat.numel()
    counts = torch.bincount(flat, minlength=num_experts)
    padded = (counts + block_m - 1) // block_m * block_m
    order = torch.argsort(flat, stable=True)
    starts = torch.cumsum(padded, 0) - padded
    rank_in_expert = torch.arange(num_valid, device=flat.device) - (torch.cumsum(counts, 0) - counts)[flat[order]]
    sorted_ids = torch.full((int(padded.sum()),), num_valid, dtype=torch.int32, device=flat.device)
    sorted_ids[starts[flat[order]] + rank_in_expert] = order.to(torch.int32)
    expert_ids = torch.repeat_interleave(torch.arange(num_experts, device=flat.device, dtype=torch.int32),
                                         padded // block_m)
    return sorted_ids, expert_ids


class ModelNew(nn.Module):
    def __init__(self, num_experts, in_features, out_features):
        super().__init__()
        self.w = nn.Parameter(torch.randn(num_experts, out_features, in_features, dtype=torch.float16) * in_features ** -0.5)

    def forward(self, x, topk_ids, topk_weights):
        t, top_k = topk_ids.shape
        num_experts, N, K = self.w.shape
        BLOCK_M, BLOCK_N, BLOCK_K = 16, 64, 64
        sorted_ids, expert_ids = _align_by_expert(topk_ids, num_experts, BLOCK_M)
        out = torch.empty((t * top_k, N), device=x.device, dtype=x.dtype)
        grid = (expert_ids.numel(), triton.cdiv(N, BLOCK_N))
        _fused_moe_kernel[grid](x, self.w, out, topk_weights, sorted_ids, expert_ids,
                                N, K, t * top_k, top_k, x.stride(0), self.w.stride(0), self.w.stride(1), out.stride(0),
                                BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, num_warps=4, num_stages=3)
        return out.view(t, top_k, N)
