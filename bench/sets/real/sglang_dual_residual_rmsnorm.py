# Copyright 2023-2024 SGLang Team
# Licensed under the Apache License, Version 2.0 (LICENSES/sglang).
#
# Source: sgl-project/sglang, python/sglang/kernels/ops/layernorm/fused_rmsnorm.py, release v0.5.23 (sglang 0.5.23).
# Copied unchanged except its sglang import (is_hip() is False on an NVIDIA GPU).
"""SGLang's fused dual-residual RMSNorm (Grok's post-attention block): mid = rmsnorm(x) * w1 + residual,
out = rmsnorm(mid) * w2, one program per token.

Realistic size: Grok-1's hidden 6144, 8192 tokens of prefill, bf16.
LADDER_SIZE=small (or --small): 16 tokens x hidden 256, fp32.
"""

import os
import sys
import torch
import triton
import triton.language as tl

_is_hip = False  # sglang.srt.utils.is_hip() on an NVIDIA GPU


@triton.jit
def fused_dual_residual_rmsnorm_kernel(
    output_ptr,
    mid_ptr,
    activ_ptr,
    residual_ptr,
    weight1_ptr,
    weight2_ptr,
    eps: tl.constexpr,
    hidden_dim: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    pid = tl.program_id(axis=0)
    input_start = pid * hidden_dim

    offsets = tl.arange(0, BLOCK_SIZE)
    mask = offsets < hidden_dim

    a_ = tl.load(activ_ptr + input_start + offsets, mask=mask, other=0.0)
    a = a_.to(tl.float32)
    rms = tl.sqrt(tl.sum(a * a, axis=0) / hidden_dim + eps)

    r = tl.load(residual_ptr + input_start + offsets, mask=mask, other=0.0)
    w1_ = tl.load(weight1_ptr + offsets, mask=mask, other=0.0)
    w1 = w1_.to(tl.float32)

    a2r = r + (a / rms * w1).to(r.dtype)
    tl.store(
        mid_ptr + input_start + offsets,
        a2r,
        mask=mask,
    )

    a2r = a2r.to(tl.float32)
    rms2 = tl.sqrt(tl.sum(a2r * a2r, axis=0) / hidden_dim + eps)

    w2_ = tl.load(weight2_ptr + offsets, mask=mask, other=0.0)
    w2 = w2_.to(tl.float32)

    tl.store(
        output_ptr + input_start + offsets,
        a2r / rms2 * w2,  # implicitly casts to output dtype here
        mask=mask,
    )


def fused_dual_residual_rmsnorm(x, residual, weight1, weight2, eps):
    assert len(x.shape) == 2
    assert x.shape == residual.shape and x.dtype == residual.dtype, (
        f"{x.shape=} {residual.shape=} {x.dtype=} {residual.dtype=}"
    )
    output, mid = torch.empty_like(x), torch.empty_like(x)
    bs, hidden_dim = x.shape
    max_warps = 16 if _is_hip else 32
    config = {
        "BLOCK_SIZE": triton.next_power_of_2(hidden_dim),
        "num_warps": max(
            min(triton.next_power_of_2(triton.cdiv(hidden_dim, 256)), max_warps), 4
        ),
    }

    fused_dual_residual_rmsnorm_kernel[(bs,)](
        output,
        mid,
        x,
        residual,
        weight1,
        weight2,
        eps=eps,
        hidden_dim=hidden_dim,
        **config,
    )

    return output, mid


# Not layernorm.rmsnorm_fp32: dividing by sqrt(var + eps) rounds differently from rsqrt.
@triton.jit
def fused_rmsnorm_kernel(
    output_ptr,
    activ_ptr,
    weight_ptr,
    eps: tl.constexpr,
    hidden_dim: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    pid = tl.program_id(axis=0).to(tl.int64)
    input_start = pid * hidden_dim

    offsets = tl.arange(0, BLOCK_SIZE)
    mask = offsets < hidden_dim

    a_ = tl.load(activ_ptr + input_start + offsets, mask=mask, other=0.0)
    a = a_.to(tl.float32)
    rms = tl.sqrt(tl.sum(a * a, axis=0) / hidden_dim + eps)

    w1_ = tl.load(weight_ptr + offsets, mask=mask, other=0.0)
    w1 = w1_.to(tl.float32)

    a_rms = a / rms * w1

    tl.store(
        output_ptr + input_start + offsets,
        a_rms,  # implicitly casts to output dtype here
        mask=mask,
    )


def fused_rmsnorm(x, weight, eps, inplace=False):
    assert len(x.shape) == 2
    if inplace:
        output = x
    else:
        output = torch.empty_like(x)
    bs, hidden_dim = x.shape
    max_warps = 16 if _is_hip else 32
    config = {
        "BLOCK_SIZE": triton.next_power_of_2(hidden_dim),
        "num_warps": max(
            min(triton.next_power_of_2(triton.cdiv(hidden_dim, 256)), max_warps), 4
        ),
    }

    fused_rmsnorm_kernel[(bs,)](
        output, x, weight, eps=eps, hidden_dim=hidden_dim, **config
    )
    return output

def main():
    small = os.environ.get("LADDER_SIZE") == "small" or "--small" in sys.argv
    interpret = os.environ.get("TRITON_INTERPRET") == "1"
    device = "cpu" if interpret else "cuda"
    tokens, hidden, dtype = (16, 256, torch.float32) if small else (8192, 6144, torch.bfloat16)
    x = torch.randn(tokens, hidden, device=device, dtype=dtype)
    residual = torch.randn(tokens, hidden, device=device, dtype=dtype)
    w1 = torch.randn(hidden, device=device, dtype=dtype)
    w2 = torch.randn(hidden, device=device, dtype=dtype)
    out, mid = fused_dual_residual_rmsnorm(x, residual, w1, w2, 1e-6)
    y = fused_rmsnorm(x, w1, 1e-6)
    if interpret:
        def rms(t, w):
            return t * torch.rsqrt(t.pow(2).mean(-1, keepdim=True) + 1e-6) * w

        torch.testing.assert_close(mid, rms(x, w1) + residual, atol=1e-4, rtol=1e-4)
        torch.testing.assert_close(out, rms(mid, w2), atol=1e-4, rtol=1e-4)
        torch.testing.assert_close(y, rms(x, w1), atol=1e-4, rtol=1e-4)

if __name__ == "__main__":
    main()
