# Copyright 2023-2024 SGLang Team
# Licensed under the Apache License, Version 2.0 (LICENSES/sglang).
#
# Source: sgl-project/sglang, python/sglang/test/kernels/moe_align.py, release v0.5.23 (sglang 0.5.23): the Triton
# moe_align_block_size that SGLang's kernel tests and benchmarks hold its CUDA op to. Copied unchanged.
# (The file carries no header of its own; the package is Apache-2.0.)
"""SGLang's Triton MoE token alignment in four stages: per-expert counts, prefix sums, padded block
offsets, and the scatter of token slots into expert-sorted, block-padded order.

Realistic size: DeepSeek-V3 routing of a 4096-token prefill, 256 experts, top-8, block size 64.
LADDER_SIZE=small (or --small): 16 tokens, 8 experts, top-2, block 16.

The source file's own docstring:
    Triton reference for ``moe_align_block_size`` shared by the JIT and AOT tests.
"""

import os
import sys
import torch
import triton
import triton.language as tl


def ceil_div(a, b):
    return (a + b - 1) // b


@triton.jit
def moe_align_block_size_stage1(
    topk_ids_ptr,
    tokens_cnts_ptr,
    num_experts: tl.constexpr,
    numel: tl.constexpr,
    tokens_per_thread: tl.constexpr,
):
    pid = tl.program_id(0)
    start_idx = pid * tokens_per_thread
    off_c = (pid + 1) * num_experts

    for i in range(tokens_per_thread):
        if start_idx + i < numel:
            idx = tl.load(topk_ids_ptr + start_idx + i)
            token_cnt = tl.load(tokens_cnts_ptr + off_c + idx)
            tl.store(tokens_cnts_ptr + off_c + idx, token_cnt + 1)


@triton.jit
def moe_align_block_size_stage2(
    tokens_cnts_ptr,
    num_experts: tl.constexpr,
):
    pid = tl.program_id(0)
    last_cnt = 0
    for i in range(1, num_experts + 1):
        token_cnt = tl.load(tokens_cnts_ptr + i * num_experts + pid)
        last_cnt = last_cnt + token_cnt
        tl.store(tokens_cnts_ptr + i * num_experts + pid, last_cnt)


@triton.jit
def moe_align_block_size_stage3(
    total_tokens_post_pad_ptr,
    tokens_cnts_ptr,
    cumsum_ptr,
    num_experts: tl.constexpr,
    block_size: tl.constexpr,
):
    last_cumsum = 0
    off_cnt = num_experts * num_experts
    for i in range(1, num_experts + 1):
        token_cnt = tl.load(tokens_cnts_ptr + off_cnt + i - 1)
        last_cumsum = last_cumsum + tl.cdiv(token_cnt, block_size) * block_size
        tl.store(cumsum_ptr + i, last_cumsum)
    tl.store(total_tokens_post_pad_ptr, last_cumsum)


@triton.jit
def moe_align_block_size_stage4(
    topk_ids_ptr,
    sorted_token_ids_ptr,
    expert_ids_ptr,
    tokens_cnts_ptr,
    cumsum_ptr,
    num_experts: tl.constexpr,
    block_size: tl.constexpr,
    numel: tl.constexpr,
    tokens_per_thread: tl.constexpr,
):
    pid = tl.program_id(0)
    start_idx = tl.load(cumsum_ptr + pid)
    end_idx = tl.load(cumsum_ptr + pid + 1)

    for i in range(start_idx, end_idx, block_size):
        tl.store(expert_ids_ptr + i // block_size, pid)

    start_idx = pid * tokens_per_thread
    off_t = pid * num_experts

    for i in range(start_idx, tl.minimum(start_idx + tokens_per_thread, numel)):
        expert_id = tl.load(topk_ids_ptr + i)
        token_cnt = tl.load(tokens_cnts_ptr + off_t + expert_id)
        rank_post_pad = token_cnt + tl.load(cumsum_ptr + expert_id)
        tl.store(sorted_token_ids_ptr + rank_post_pad, i)
        tl.store(tokens_cnts_ptr + off_t + expert_id, token_cnt + 1)


def moe_align_block_size_triton(
    topk_ids: torch.Tensor,
    num_experts: int,
    block_size: int,
    sorted_token_ids: torch.Tensor,
    expert_ids: torch.Tensor,
    num_tokens_post_pad: torch.Tensor,
) -> None:
    numel = topk_ids.numel()
    grid = (num_experts,)
    tokens_cnts = torch.zeros(
        (num_experts + 1, num_experts), dtype=torch.int32, device=topk_ids.device
    )
    cumsum = torch.zeros((num_experts + 1,), dtype=torch.int32, device=topk_ids.device)
    tokens_per_thread = ceil_div(numel, num_experts)

    moe_align_block_size_stage1[grid](
        topk_ids,
        tokens_cnts,
        num_experts,
        numel,
        tokens_per_thread,
    )
    moe_align_block_size_stage2[grid](
        tokens_cnts,
        num_experts,
    )
    moe_align_block_size_stage3[(1,)](
        num_tokens_post_pad,
        tokens_cnts,
        cumsum,
        num_experts,
        block_size,
    )
    moe_align_block_size_stage4[grid](
        topk_ids,
        sorted_token_ids,
        expert_ids,
        tokens_cnts,
        cumsum,
        num_experts,
        block_size,
        numel,
        tokens_per_thread,
    )

def main():
    small = os.environ.get("LADDER_SIZE") == "small" or "--small" in sys.argv
    interpret = os.environ.get("TRITON_INTERPRET") == "1"
    device = "cpu" if interpret else "cuda"
    tokens, experts, top_k, block = (16, 8, 2, 16) if small else (4096, 256, 8, 64)
    scores = torch.rand(tokens, experts, device=device)
    topk_ids = torch.topk(scores, top_k, dim=-1).indices.to(torch.int32)
    max_padded = topk_ids.numel() + experts * (block - 1)
    sorted_ids = torch.full((max_padded,), topk_ids.numel(), dtype=torch.int32, device=device)
    expert_ids = torch.zeros((ceil_div(max_padded, block),), dtype=torch.int32, device=device)
    num_post_pad = torch.empty((1,), dtype=torch.int32, device=device)
    moe_align_block_size_triton(topk_ids, experts, block, sorted_ids, expert_ids, num_post_pad)
    if interpret:
        counts = torch.bincount(topk_ids.flatten().long(), minlength=experts)
        padded = (counts + block - 1) // block * block
        assert int(num_post_pad) == int(padded.sum())
        flat = topk_ids.flatten()
        start = 0
        for e in range(experts):
            chunk = sorted_ids[start:start + int(padded[e])]
            real = chunk[chunk < flat.numel()].long()
            assert real.numel() == int(counts[e]) and bool((flat[real] == e).all())
            assert bool((expert_ids[start // block:(start + int(padded[e])) // block] == e).all())
            start += int(padded[e])

if __name__ == "__main__":
    main()
