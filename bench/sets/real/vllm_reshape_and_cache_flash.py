# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: Copyright contributors to the vLLM project
#
# Source: vllm-project/vllm, vllm/v1/attention/ops/triton_reshape_and_cache_flash.py, release v0.33.0 (vllm 0.33.0).
# The kernel reshape_and_cache_kernel_flash and its launcher are copied unchanged; the per-token-head
# quantized and diff-KV variants are left out, current_platform and is_quantized_kv_cache answer for
# an NVIDIA GPU.
"""vLLM's KV-cache write: scatter this step's keys and values into the paged cache by slot mapping.

Realistic size: a prefill batch of 16384 tokens into a Llama-3-8B layer's cache, 8 KV heads x dim
128, page size 16, bf16 cache ("auto"), slots of a shuffled 2048-page pool.
LADDER_SIZE=small (or --small): 20 tokens, 2 KV heads x dim 32, page 16, fp32.
"""

import os
import sys
import torch
import triton
import triton.language as tl


class current_platform:
    """What vllm.platforms.current_platform answers on the NVIDIA Hopper GPU the set targets."""

    @staticmethod
    def is_rocm():
        return False

    @staticmethod
    def is_xpu():
        return False

    @staticmethod
    def is_fp8_fnuz():
        return False

    @staticmethod
    def fp8_dtype():
        return torch.float8_e4m3fn

    @staticmethod
    def has_device_capability(capability):
        return capability <= 90


def is_quantized_kv_cache(kv_cache_dtype: str) -> bool:
    """vllm.v1.kv_cache_interface.is_quantized_kv_cache for the dtypes this script names."""
    return kv_cache_dtype.startswith("fp8")


FP8_MIN, FP8_MAX = torch.finfo(torch.float8_e4m3fn).min, torch.finfo(torch.float8_e4m3fn).max


_NATIVE_KV_CACHE_DTYPES = {"auto", "float16", "bfloat16", "float32", "half", "float"}


def _is_supported_kv_cache_dtype(kv_cache_dtype: str) -> bool:
    if not (
        kv_cache_dtype in _NATIVE_KV_CACHE_DTYPES
        or is_quantized_kv_cache(kv_cache_dtype)
    ):
        return False
    if kv_cache_dtype.startswith("fp8"):
        return current_platform.has_device_capability(89) or current_platform.is_xpu()
    if kv_cache_dtype == "bfloat16":
        return current_platform.has_device_capability(80) or current_platform.is_xpu()
    return True


@triton.jit
def reshape_and_cache_kernel_flash(
    key_ptr,  # [num_tokens, num_heads, head_size]
    value_ptr,  # [num_tokens, num_heads, head_size]
    key_cache_ptr,  # [num_blocks, block_size, num_heads, head_size]
    value_cache_ptr,  # [num_blocks, block_size, num_heads, head_size]
    slot_mapping_ptr,  # [num_tokens]
    k_scale,  # float32
    v_scale,  # float32
    # strides
    key_stride: tl.int64,
    value_stride: tl.int64,
    block_stride: tl.int64,
    head_stride: tl.int64,
    dim_stride_k: tl.int64,
    dim_stride_v: tl.int64,
    page_stride: tl.int64,
    num_heads: tl.constexpr,
    head_size: tl.constexpr,
    block_size: tl.constexpr,
    x: tl.constexpr,
    USE_HEAD_MAJOR_LAYOUT: tl.constexpr,
    # >0 writes V interleaved as [Block, Head, Slot//kx, Dim, kx] (head-major
    # layout only); 0 keeps the standard [Block, Head, Dim, Slot] V layout.
    INTERLEAVED_V_PACK_FACTOR: tl.constexpr,
    # FP8 flags
    FP8_KV_CACHE: tl.constexpr,
    # tune parameters
    TILE_SIZE: tl.constexpr,
):
    token_idx = tl.program_id(axis=0)
    slot_idx = tl.load(slot_mapping_ptr + token_idx).to(tl.int64)
    if slot_idx < 0:
        # Padding token that should be ignored.
        return

    block_idx = slot_idx // block_size
    block_offset = slot_idx % block_size

    tile_i = tl.program_id(axis=1)
    tile_offs = tl.arange(0, TILE_SIZE)
    tile_pos = tile_i * TILE_SIZE + tile_offs
    src_key_idx = token_idx * key_stride
    src_value_idx = token_idx * value_stride

    if USE_HEAD_MAJOR_LAYOUT:
        # Decompose the tile index back into head and dim coordinates.
        cur_head = tile_pos // head_size
        cur_dim = tile_pos % head_size
        # Value addressing: standard 4D [Block, Head, Dim, Slot], or the
        # interleaved 5D [Block, Head, Slot//kx, Dim, kx] the fused AITER
        # writer emits and the interleaved read path expects.
        if INTERLEAVED_V_PACK_FACTOR > 0:
            tgt_idx_v = (
                block_idx * block_stride
                + cur_head * head_stride
                + (block_offset // INTERLEAVED_V_PACK_FACTOR)
                * (head_size * INTERLEAVED_V_PACK_FACTOR)
                + cur_dim * INTERLEAVED_V_PACK_FACTOR
                + (block_offset % INTERLEAVED_V_PACK_FACTOR)
            )
        else:
            tgt_idx_v = (
                block_idx * block_stride
                + cur_head * head_stride
                + cur_dim * dim_stride_v
                + block_offset * 1
            )
        # Key addressing (5D): [Block, Head, Dim//8, Slot, 8]
        tgt_idx_k = (
            block_idx * block_stride
            + cur_head * head_stride
            + (cur_dim // x) * dim_stride_k
            + block_offset * x
            + (cur_dim % x)
        )
    else:
        cur_head = tile_pos // head_size
        cur_dim = tile_pos % head_size
        tgt_idx_k = (
            block_idx * block_stride
            + block_offset * page_stride
            + cur_head * head_stride
            + cur_dim
        )
        tgt_idx_v = tgt_idx_k

    # [TILE_SIZE]
    key_load = tl.load(
        key_ptr + src_key_idx + tile_pos, mask=tile_pos < (num_heads * head_size)
    )
    if FP8_KV_CACHE:
        # tl.store will do the correct implicit cast to fp8,
        # based on the key_cache_ptr.dtype.element_ty
        key_tile = key_load if key_load.dtype.is_fp8() else key_load / tl.load(k_scale)
    else:
        key_tile = key_load

    # [TILE_SIZE]
    value_load = tl.load(
        value_ptr + src_value_idx + tile_pos, mask=tile_pos < (num_heads * head_size)
    )
    if FP8_KV_CACHE:
        if value_load.dtype.is_fp8():
            value_tile = value_load
        else:
            # tl.store will do the correct implicit cast to fp8,
            #  based on the value_cache_ptr.dtype.element_ty
            value_tile = value_load / tl.load(v_scale)
    else:
        value_tile = value_load

    tl.store(
        key_cache_ptr + tgt_idx_k,
        key_tile,
        mask=tile_pos < (num_heads * head_size),
    )
    tl.store(
        value_cache_ptr + tgt_idx_v,
        value_tile,
        mask=tile_pos < (num_heads * head_size),
    )
    return


def triton_reshape_and_cache_flash(
    key: torch.Tensor,  # [num_tokens, num_heads, head_size]
    value: torch.Tensor,  # [num_tokens, num_heads, head_size]
    # [num_blocks, block_size, num_heads, head_size]
    key_cache: torch.Tensor,
    # [num_blocks, block_size, num_heads, head_size]
    value_cache: torch.Tensor,
    slot_mapping: torch.Tensor,  # [num_tokens]
    kv_cache_dtype: str,  # "auto", "fp8"
    k_scale: torch.Tensor,  # float32
    v_scale: torch.Tensor,  # float32
    interleaved_v_pack_factor: int = 0,  # >0: interleave V (head-major); 0: standard
):
    num_heads = key.shape[1]
    head_size = key.shape[2]

    use_head_major_layout = key_cache.ndim == 5
    if interleaved_v_pack_factor and not use_head_major_layout:
        raise NotImplementedError(
            "Interleaved V-cache write is only implemented for the head-major "
            "(5D) cache layout; got a non-head-major cache with "
            f"interleaved_v_pack_factor={interleaved_v_pack_factor}."
        )
    if use_head_major_layout:
        block_size = key_cache.shape[3]
        x = key_cache.shape[4]
        head_stride = key_cache.stride(1)
        dim_stride_k = key_cache.stride(2)
        dim_stride_v = value_cache.stride(2)
    else:
        block_size = key_cache.shape[1]
        x = 1
        dim_stride_k = 0
        dim_stride_v = 0
        head_stride = key_cache.stride()[2]
    n = num_heads * head_size
    key_stride = key.stride()[0]
    value_stride = value.stride()[0]
    block_stride = key_cache.stride()[0]
    page_stride = key_cache.stride()[1]

    assert _is_supported_kv_cache_dtype(kv_cache_dtype), (
        f"Triton reshape-and-cache cannot store kv_cache_dtype={kv_cache_dtype} "
        f"on this device: an FP8 KV cache needs native fp8e4nv (SM89+). Use "
        f"--kv-cache-dtype bfloat16 (or float16 on SM75)."
    )
    kv_cache_torch_dtype = (
        current_platform.fp8_dtype()
        if is_quantized_kv_cache(kv_cache_dtype)
        else key_cache.dtype
    )

    if key_cache.dtype != kv_cache_torch_dtype and is_quantized_kv_cache(
        kv_cache_dtype
    ):
        # to avoid erounous implicit cast in triton kernel (tl.store to uint8)
        # (e.g. explicit cast to fp8e4m3fnuz is not supported in triton 3.4)
        key_cache = key_cache.view(kv_cache_torch_dtype)
        value_cache = value_cache.view(kv_cache_torch_dtype)
    FP8_KV_CACHE = is_quantized_kv_cache(kv_cache_dtype)
    # heuristics instead of autotuning
    TILE_SIZE = min(2048, triton.next_power_of_2(n))
    if current_platform.is_rocm() or current_platform.is_xpu():
        num_stages = 4
        num_warps = 8
    else:  # cuda
        num_stages = 10
        num_warps = 16
        if key.device.type == "cuda" and torch.cuda.get_device_capability(key.device)[0] < 9:
            TILE_SIZE = min(512, TILE_SIZE)

    # TODO(ngl): maybe replace with static launch grid to avoid overhead if
    #   using cudagraphs
    grid = lambda meta: (
        slot_mapping.shape[0],
        triton.cdiv(n, meta["TILE_SIZE"]),
    )

    reshape_and_cache_kernel_flash[grid](
        key_ptr=key,
        value_ptr=value,
        key_cache_ptr=key_cache,
        value_cache_ptr=value_cache,
        slot_mapping_ptr=slot_mapping,
        k_scale=k_scale,
        v_scale=v_scale,
        # strides
        key_stride=key_stride,
        value_stride=value_stride,
        block_stride=block_stride,
        head_stride=head_stride,
        dim_stride_k=dim_stride_k,
        dim_stride_v=dim_stride_v,
        page_stride=page_stride,
        num_heads=num_heads,
        head_size=head_size,
        block_size=block_size,
        x=x,
        USE_HEAD_MAJOR_LAYOUT=use_head_major_layout,
        INTERLEAVED_V_PACK_FACTOR=interleaved_v_pack_factor,
        FP8_KV_CACHE=FP8_KV_CACHE,
        # autotune parameters
        TILE_SIZE=TILE_SIZE,
        num_warps=num_warps,
        num_stages=num_stages,
    )

def main():
    small = os.environ.get("LADDER_SIZE") == "small" or "--small" in sys.argv
    interpret = os.environ.get("TRITON_INTERPRET") == "1"
    device = "cpu" if interpret else "cuda"
    tokens, heads, dim, page, dtype = (20, 2, 32, 16, torch.float32) if small else (16384, 8, 128, 16, torch.bfloat16)
    num_pages = 2 * triton.cdiv(tokens, page)
    key = torch.randn(tokens, heads, dim, device=device, dtype=dtype)
    value = torch.randn(tokens, heads, dim, device=device, dtype=dtype)
    key_cache = torch.zeros(num_pages, page, heads, dim, device=device, dtype=dtype)
    value_cache = torch.zeros_like(key_cache)
    slot_mapping = torch.randperm(num_pages * page, device=device)[:tokens].to(torch.int64)
    scale = torch.ones(1, device=device, dtype=torch.float32)
    triton_reshape_and_cache_flash(key, value, key_cache, value_cache, slot_mapping, "auto", scale, scale)
    if interpret:
        torch.testing.assert_close(key_cache.view(-1, heads, dim)[slot_mapping], key)
        torch.testing.assert_close(value_cache.view(-1, heads, dim)[slot_mapping], value)

if __name__ == "__main__":
    main()
