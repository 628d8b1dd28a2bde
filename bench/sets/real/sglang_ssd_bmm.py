# Source: sgl-project/sglang, python/sglang/kernels/ops/mamba/triton_ops/ssd_bmm.py with
# prune_oversized_tiles (triton_ops/autotune.py) and autotune_cache_kwargs (kernels/ops/attention/fla/utils.py),
# release v0.5.23 (sglang 0.5.23), Apache License 2.0 (LICENSES/sglang; the file's own notices follow).
# Copied unchanged but for those imports and the device context of the launch (torch.cuda for a GPU
# tensor, none for a host one: torch.cpu has no device context, so the interpreter could not run it).
"""The chunked batched matmul of Mamba-2's state-space duality (SSD) scan: per chunk of the sequence,
C_chunk @ B_chunk^T for every group, masked across packed sequences, autotuned with tiles pruned to
the chunk.

Realistic size: a Mamba-2 layer of a hybrid model in prefill, 4 sequences x 8192 tokens, 8 groups,
state 128, chunk 256, bf16.
LADDER_SIZE=small (or --small): 2 x 100 tokens (two packed sequences in each), 2 groups, state 16,
chunk 32, fp32.
"""
# Adapted from: https://github.com/vllm-project/vllm/tree/main/vllm/model_executor/layers/mamba/ops/ssd_bmm.py

# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: Copyright contributors to the vLLM project

# Copyright (c) 2024, Tri Dao, Albert Gu.
# Adapted from https://github.com/state-spaces/mamba/blob/v2.2.4/mamba_ssm/ops/triton/ssd_bmm.py

# ruff: noqa: E501,SIM102

import contextlib
import inspect
import math
import os
import sys
from collections.abc import Callable, Mapping, Sequence

import torch
import triton
import triton.language as tl


# sglang/kernels/ops/attention/fla/utils.py
FLA_CACHE_RESULTS = os.getenv("FLA_CACHE_RESULTS", "1") == "1"
SUPPORTS_AUTOTUNE_CACHE = (
    "cache_results" in inspect.signature(triton.autotune).parameters
)

autotune_cache_kwargs = (
    {"cache_results": FLA_CACHE_RESULTS} if SUPPORTS_AUTOTUNE_CACHE else {}
)


# sglang/kernels/ops/mamba/triton_ops/autotune.py
def _tile_footprint(config: triton.Config) -> tuple[int, int, int]:
    footprint = 1
    for block in config.kwargs.values():
        footprint *= block
    return footprint, config.num_stages, config.num_warps


def prune_oversized_tiles(
    tiled_dims: Mapping[str, Sequence[str]],
) -> Callable[..., list[triton.Config]]:
    """Build an `early_config_prune` that drops tiles wider than what they cover.

    A block larger than the dimension it tiles computes a fully masked remainder
    for the same grid, so it is dominated; `tiled_dims` maps each BLOCK_SIZE_* to
    the kernel arguments it strides over, and a block is capped by the smallest.
    """

    def early_config_prune(configs, named_args, **kwargs):
        # Triton splits the launch into positional args and kwargs; a dimension
        # can arrive through either.
        args = {**kwargs, **named_args}
        caps = {}
        for block, dims in tiled_dims.items():
            cap = triton.next_power_of_2(min(args[dim] for dim in dims))
            caps[block] = max(cap, min(c.kwargs[block] for c in configs))
        keep = [
            config
            for config in configs
            if all(config.kwargs[block] <= cap for block, cap in caps.items())
        ]
        return keep or [min(configs, key=_tile_footprint)]

    return early_config_prune


def device_context(device):
    """torch.cuda.device for a GPU tensor, nothing for a host one."""
    return torch.get_device_module(device).device(device.index) if device.type != "cpu" else contextlib.nullcontext()


@triton.autotune(
    configs=[
        triton.Config(
            {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 64},
            num_stages=3,
            num_warps=8,
        ),
        triton.Config(
            {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 32},
            num_stages=4,
            num_warps=4,
        ),
        triton.Config(
            {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 32},
            num_stages=4,
            num_warps=4,
        ),
        triton.Config(
            {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32},
            num_stages=4,
            num_warps=4,
        ),
        triton.Config(
            {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 32},
            num_stages=4,
            num_warps=4,
        ),
        triton.Config(
            {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 32},
            num_stages=4,
            num_warps=4,
        ),
        triton.Config(
            {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 32},
            num_stages=5,
            num_warps=2,
        ),
        triton.Config(
            {"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32},
            num_stages=5,
            num_warps=2,
        ),
        triton.Config(
            {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32},
            num_stages=4,
            num_warps=2,
        ),
    ],
    key=["chunk_size", "K", "IS_CAUSAL"],
    prune_configs_by={
        "early_config_prune": prune_oversized_tiles(
            {
                "BLOCK_SIZE_M": ("chunk_size",),
                "BLOCK_SIZE_N": ("chunk_size",),
                "BLOCK_SIZE_K": ("K",),
            }
        )
    },
    **autotune_cache_kwargs,
)
@triton.jit
def _bmm_chunk_fwd_kernel(
    # Pointers to matrices
    a_ptr,
    b_ptr,
    out_ptr,
    seq_idx_ptr,
    # Matrix dimensions
    seqlen,
    chunk_size,
    K,
    ngroups,
    stride_a_batch,
    stride_a_seqlen,
    stride_a_head,
    stride_ak,
    stride_b_batch,
    stride_b_seqlen,
    stride_b_head,
    stride_bk,
    stride_out_batch,
    stride_out_chunk,
    stride_out_head,
    stride_outm,
    stride_outn,
    stride_seq_idx_batch,
    stride_seq_idx_seqlen,
    # Meta-parameters
    IS_CAUSAL: tl.constexpr,
    dot_dtype: tl.constexpr,
    HAS_SEQ_IDX: tl.constexpr,
    BLOCK_SIZE_M: tl.constexpr = 16,
    BLOCK_SIZE_N: tl.constexpr = 16,
    BLOCK_SIZE_K: tl.constexpr = 16,
):
    pid_b = tl.program_id(axis=1)
    pid_ch = tl.program_id(axis=2).to(tl.int64)
    pid_c = pid_ch // ngroups
    pid_h = pid_ch - pid_c * ngroups
    num_pid_n = tl.cdiv(chunk_size, BLOCK_SIZE_N)
    pid_m = tl.program_id(axis=0) // num_pid_n
    pid_n = tl.program_id(axis=0) % num_pid_n
    if IS_CAUSAL:
        if pid_n * BLOCK_SIZE_N >= (pid_m + 1) * BLOCK_SIZE_M:
            return
    a_ptr += (
        pid_b * stride_a_batch
        + pid_c * chunk_size * stride_a_seqlen
        + pid_h * stride_a_head
    )
    b_ptr += (
        pid_b * stride_b_batch
        + pid_c * chunk_size * stride_b_seqlen
        + pid_h * stride_b_head
    )
    if HAS_SEQ_IDX:
        seq_idx_ptr += (
            pid_b * stride_seq_idx_batch + pid_c * chunk_size * stride_seq_idx_seqlen
        )

    offs_m = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_n = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_m[:, None] * stride_a_seqlen + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_n[None, :] * stride_b_seqlen)
    chunk_size_limit = min(chunk_size, seqlen - pid_c * chunk_size)

    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(
            a_ptrs,
            mask=(offs_m[:, None] < chunk_size_limit)
            & (offs_k[None, :] < K - k * BLOCK_SIZE_K),
            other=0.0,
        ).to(dot_dtype)
        b = tl.load(
            b_ptrs,
            mask=(offs_k[:, None] < K - k * BLOCK_SIZE_K)
            & (offs_n[None, :] < chunk_size_limit),
            other=0.0,
        ).to(dot_dtype)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk

    offs_m = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_n = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    if HAS_SEQ_IDX:
        chunk_size_limit = min(chunk_size, seqlen - pid_c * chunk_size)
        seq_idx_m = tl.load(
            seq_idx_ptr + offs_m * stride_seq_idx_seqlen,
            mask=offs_m < chunk_size_limit,
            other=-1,
        )
        seq_idx_n = tl.load(
            seq_idx_ptr + offs_n * stride_seq_idx_seqlen,
            mask=offs_n < chunk_size_limit,
            other=-2,
        )
        acc = tl.where(seq_idx_m[:, None] == seq_idx_n[None, :], acc, 0.0)
    out = acc.to(out_ptr.dtype.element_ty)

    out_ptr += (
        pid_b * stride_out_batch + pid_c * stride_out_chunk + pid_h * stride_out_head
    )
    out_ptrs = out_ptr + (stride_outm * offs_m[:, None] + offs_n[None, :] * stride_outn)
    tl.store(
        out_ptrs,
        out,
        mask=(offs_m[:, None] < chunk_size) & (offs_n[None, :] < chunk_size),
    )


def _bmm_chunk_fwd(a, b, chunk_size, seq_idx=None, causal=False, output_dtype=None):
    """
    Argument:
        a: (batch, seqlen, k) or (batch, seqlen, ngroups, k)
        b: (batch, seqlen, k) or (batch, seqlen, ngroups, k)
        seq_idx: (batch, seqlen) or None. out[i, j] for seq_idx[i] != seq_idx[j] will be zeroed out.
        causal: if True, then out[i, j] for i > j will be arbitrary, only out[i, j] for i <= j are
            guaranteed to be correct.
    Return:
        out: (batch, nchunks, chunk_size, chunk_size) or (batch, nchunks, ngroups, chunk_size, chunk_size)
    """
    # Check constraints.
    has_groups = a.dim() == 4
    if not has_groups:
        batch, seqlen, k = a.shape
    else:
        batch, seqlen, ngroups, k = a.shape
    assert b.shape == a.shape
    if seq_idx is not None:
        assert seq_idx.shape == (batch, seqlen)
    if a.stride(-1) != 1 and a.stride(1) != 1:
        a = a.contiguous()
    if b.stride(-1) != 1 and b.stride(1) != 1:
        b = b.contiguous()
    nchunks = math.ceil(seqlen / chunk_size)
    # Allocates output.
    out_dtype = a.dtype if output_dtype is None else output_dtype
    out = torch.empty(
        (
            (batch, nchunks, chunk_size, chunk_size)
            if not has_groups
            else (batch, nchunks, ngroups, chunk_size, chunk_size)
        ),
        device=a.device,
        dtype=out_dtype,
    )
    dot_dtype = (
        tl.bfloat16
        if a.dtype == torch.bfloat16 or b.dtype == torch.bfloat16
        else (
            tl.float16
            if a.dtype == torch.float16 or b.dtype == torch.float16
            else tl.float32
        )
    )
    grid = lambda META: (
        triton.cdiv(chunk_size, META["BLOCK_SIZE_M"])
        * triton.cdiv(chunk_size, META["BLOCK_SIZE_N"]),
        batch,
        nchunks if not has_groups else nchunks * ngroups,
    )
    with device_context(a.device):
        _bmm_chunk_fwd_kernel[grid](
            a,
            b,
            out,
            seq_idx,
            seqlen,
            chunk_size,
            k,
            ngroups if has_groups else 1,
            a.stride(0),
            a.stride(1),
            0 if not has_groups else a.stride(2),
            a.stride(-1),
            b.stride(0),
            b.stride(1),
            0 if not has_groups else b.stride(2),
            b.stride(-1),
            out.stride(0),
            out.stride(1),
            0 if not has_groups else out.stride(2),
            out.stride(-2),
            out.stride(-1),
            *(
                (seq_idx.stride(0), seq_idx.stride(1))
                if seq_idx is not None
                else (0, 0)
            ),
            causal,
            dot_dtype,
            HAS_SEQ_IDX=seq_idx is not None,
        )
    return out


def main():
    small = os.environ.get("LADDER_SIZE") == "small" or "--small" in sys.argv
    interpret = os.environ.get("TRITON_INTERPRET") == "1"
    device = "cpu" if interpret else "cuda"
    batch, seqlen, groups, state, chunk, dtype = (2, 100, 2, 16, 32, torch.float32) if small else (4, 8192, 8, 128, 256, torch.bfloat16)
    C = torch.randn(batch, seqlen, groups, state, device=device, dtype=dtype)
    B = torch.randn(batch, seqlen, groups, state, device=device, dtype=dtype)
    # two sequences packed in each row, the second starting mid-chunk
    seq_idx = (torch.arange(seqlen, device=device) >= seqlen * 3 // 5).to(torch.int32).expand(batch, seqlen).contiguous()
    CB = _bmm_chunk_fwd(C, B, chunk, seq_idx=seq_idx, output_dtype=torch.float32)
    if interpret:
        chunks = math.ceil(seqlen / chunk)
        pad = chunks * chunk - seqlen
        Cp = torch.nn.functional.pad(C, (0, 0, 0, 0, 0, pad)).view(batch, chunks, chunk, groups, state)
        Bp = torch.nn.functional.pad(B, (0, 0, 0, 0, 0, pad)).view(batch, chunks, chunk, groups, state)
        sp = torch.nn.functional.pad(seq_idx, (0, pad), value=-1).view(batch, chunks, chunk)
        ref = torch.einsum("bcigk,bcjgk->bcgij", Cp, Bp)
        same = (sp[:, :, :, None] == sp[:, :, None, :])[:, :, None]
        ref = torch.where(same, ref, 0.0)
        valid = (sp >= 0)[:, :, None, :, None] & (sp >= 0)[:, :, None, None, :]
        torch.testing.assert_close(torch.where(valid, CB, 0.0), torch.where(valid, ref, 0.0), atol=1e-4, rtol=1e-4)


if __name__ == "__main__":
    main()
