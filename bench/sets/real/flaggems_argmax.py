# Copyright (c) 2024 BAAI (FlagOpen). Licensed under the Apache License, Version 2.0 (LICENSES/FlagGems).
#
# Source: FlagOpen/FlagGems, src/flag_gems/ops/argmax.py with get_dtype_min (utils/limits.py) and the
# argmax heuristics of runtime/backend/_nvidia/heuristics_config_utils.py, release v5.0.2 (flag-gems 5.0.2).
# Copied unchanged except the FlagGems imports (libentry, torch_device_fn, tle, runtime.get_heuristic_config,
# as named above).
"""FlagGems' argmax (aten.argmax replacement): over the last dimension (the inner kernel, a loop of
4096-wide tiles past 32K columns) and over the whole tensor (two stages).

Realistic size: greedy decoding of 256 sequences over Llama-3's vocabulary, logits 256 x 128256, bf16;
and the global argmax of one 128256 x 64 block of them.
LADDER_SIZE=small (or --small): 8 x 3000 and 64 x 48, fp32 (the loop at 3000 columns runs one tile).
"""
import math
import contextlib
import os
import sys
import types

import torch
import triton
import triton.language as tl



def libentry():
    """flag_gems.utils.libentry caches each launch's arguments in front of the JIT (a dispatch
    speed-up); the kernel it launches is the same without it."""
    return lambda fn: fn


class torch_device_fn:
    """flag_gems.runtime.torch_device_fn on an NVIDIA GPU: torch.cuda (its device context is a
    no-op for a tensor off the GPU)."""

    @staticmethod
    def device(device):
        index = device.index if isinstance(device, torch.device) else device
        is_cuda = device.type == "cuda" if isinstance(device, torch.device) else device is not None
        return torch.cuda.device(index) if is_cuda else contextlib.nullcontext()


# flag_gems/utils/triton_lang_extension.py (the two device functions these kernels call)
@triton.jit
def program_id(
    axis: int,
) -> tl.tensor:
    return tl.program_id(axis).to(tl.int64)


@triton.jit
def num_programs(
    axis: int,
) -> tl.tensor:
    return tl.num_programs(axis).to(tl.int64)


tle = types.ModuleType("triton_lang_extension")
tle.program_id = program_id
tle.num_programs = num_programs


# flag_gems/utils/limits.py
@triton.jit
def get_dtype_min(dtype):
    """get a value which is less that all other values of that dtype"""
    dtype_ = dtype.value  # tl.dtype
    if dtype_.is_floating():
        value: tl.constexpr = float("-inf")
        return value
    if dtype_.is_int_signed():
        width: tl.constexpr = dtype_.int_bitwidth
        value: tl.constexpr = -1 * 2 ** (width - 1)
        return value
    if dtype_.is_int_unsigned():
        value: tl.constexpr = 0
        return value


# runtime/backend/_nvidia/heuristics_config_utils.py (the argmax heuristics)
def argmax_heur_tile_k(args):
    MAX_TILE_K = 512
    NUM_SMS = torch.cuda.get_device_properties(
        torch.cuda.current_device()
    ).multi_processor_count

    K = args["K"]
    M = args["M"]
    dtype = "fp32" if args["inp"].dtype == torch.float32 else "fp16"

    if M == 64 and K == 512:
        return 64 if dtype == "fp32" else 128

    if K <= 128:
        return 1 << (K.bit_length() - 1) if K > 0 else 1

    tile_k = 64
    upper_bound = min(K, MAX_TILE_K)

    while tile_k <= upper_bound:
        num_blocks = M * triton.cdiv(K, tile_k)
        num_waves = num_blocks / NUM_SMS

        if num_waves > 1 and (tile_k * 2 <= upper_bound):
            tile_k *= 2
        else:
            break

    return tile_k


def argmax_heur_tile_n_non_inner(args):
    n = args["N"]
    tile_k = args["TILE_K"]

    if n <= 128:
        return n

    target_tile = min(8192, n)
    tile_n = triton.next_power_of_2(target_tile)
    tile_n = max(64, min(tile_n, 4096))

    if tile_n * tile_k > 32768:
        tile_n = max(64, 32768 // tile_k)

    return tile_n


def argmax_heur_one_tile_per_cta(args):
    return args["TILE_N"] >= args["N"]


def argmax_heur_num_warps_non_inner(args):
    tile_n = args["TILE_N"]
    dtype = "fp32" if args["inp"].dtype == torch.float32 else "fp16"

    if tile_n <= 32:
        num_warps = 2
    elif tile_n <= 64:
        num_warps = 4
    elif tile_n <= 128:
        num_warps = 4
    else:
        num_warps = 8

    if dtype == "fp32":
        num_warps = min(num_warps, 4)

    return num_warps


def argmax_heur_tile_n_inner(args):
    if args["N"] <= (32 * 1024):
        return triton.next_power_of_2(args["N"])
    else:
        return 4096


def argmax_heur_num_warps_inner(args):
    tile_size = args["TILE_N"]
    if tile_size < 2048:
        return 4
    elif tile_size < 4096:
        return 8
    else:
        return 16


class runtime:
    """flag_gems.runtime.get_heuristic_config on an NVIDIA GPU (the table of that file)."""

    HEURISTICS = {
        "argmax_non_inner": {
            "TILE_K": argmax_heur_tile_k,
            "TILE_N": argmax_heur_tile_n_non_inner,
            "ONE_TILE_PER_CTA": argmax_heur_one_tile_per_cta,
            "num_warps": argmax_heur_num_warps_non_inner,
        },
        "argmax_inner": {
            "TILE_N": argmax_heur_tile_n_inner,
            "ONE_TILE_PER_CTA": argmax_heur_one_tile_per_cta,
            "num_warps": argmax_heur_num_warps_inner,
        },
    }

    @staticmethod
    def get_heuristic_config(name):
        return runtime.HEURISTICS[name]


import logging



logger = logging.getLogger(__name__)


@libentry()
@triton.jit
def argmax_kernel_1(
    inp,
    mid_value,
    mid_index,
    M,
    BLOCK_SIZE: tl.constexpr,
):
    pid = tle.program_id(0)
    offset = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    inp_ptrs = inp + offset
    mask = offset < M
    min_value = get_dtype_min(inp.type.element_ty)
    inp_val = tl.load(inp_ptrs, mask=mask, other=min_value)
    max_val, max_index = tl.max(inp_val, axis=0, return_indices=True)
    max_index = max_index + pid * BLOCK_SIZE
    mid_value_ptr = mid_value + pid
    max_index_ptr = mid_index + pid
    tl.store(mid_value_ptr, max_val)
    tl.store(max_index_ptr, max_index)


@libentry()
@triton.jit
def argmax_kernel_2(mid_value, mid_index, out, mid_size, BLOCK_MID: tl.constexpr):
    offset = tl.arange(0, BLOCK_MID)
    mid_ptrs = mid_value + offset
    mask = offset < mid_size
    min_value = get_dtype_min(mid_value.type.element_ty)
    mid_val = tl.load(mid_ptrs, mask=mask, other=min_value)
    index_val = tl.argmax(mid_val, axis=0)
    mid_index_ptrs = mid_index + index_val
    out_val = tl.load(mid_index_ptrs)
    tl.store(out, out_val)


@libentry()
@triton.heuristics(runtime.get_heuristic_config("argmax_non_inner"))
@triton.jit
def argmax_kernel_non_inner(
    inp,
    out_index,
    M,
    N,
    K,
    TILE_K: tl.constexpr,
    TILE_N: tl.constexpr,
    ONE_TILE_PER_CTA: tl.constexpr,
):
    pid_m = tle.program_id(0)
    pid_k = tle.program_id(1)
    k_offset = pid_k * TILE_K + tl.arange(0, TILE_K)

    if tl.constexpr(inp.dtype.element_ty == tl.float16) or tl.constexpr(
        inp.dtype.element_ty == tl.bfloat16
    ):
        cdtype = tl.float32
    else:
        cdtype = inp.dtype.element_ty

    min_value = get_dtype_min(cdtype)

    if ONE_TILE_PER_CTA:
        n_offset = tl.arange(0, TILE_N)
        offset = pid_m * N * K + n_offset[:, None] * K + k_offset
        mask = k_offset < K and n_offset[:, None] < N
        inp_ptrs = inp + offset
        inp_vals = tl.load(inp_ptrs, mask=mask, other=min_value)
        local_max, local_argmax = tl.max(
            inp_vals, 0, return_indices=True, return_indices_tie_break_left=True
        )
        offset_index = pid_m * K + k_offset
        out_index_ptrs = out_index + offset_index
        mask1 = k_offset < K
        tl.store(out_index_ptrs, local_argmax, mask=mask1)
    else:
        max_values = tl.full([TILE_K], dtype=cdtype, value=min_value)
        argmax_values = tl.full([TILE_K], dtype=tl.int64, value=0)

        for start_n in range(0, N, TILE_N):
            n_offset = start_n + tl.arange(0, TILE_N)
            offset = pid_m * N * K + n_offset[:, None] * K + k_offset
            mask = k_offset < K and n_offset[:, None] < N
            inp_ptrs = inp + offset
            inp_vals = tl.load(inp_ptrs, mask=mask, other=min_value)
            local_max, local_argmax = tl.max(
                inp_vals, 0, return_indices=True, return_indices_tie_break_left=True
            )
            update = local_max > max_values
            max_values = tl.where(update, local_max, max_values)
            argmax_values = tl.where(update, start_n + local_argmax, argmax_values)
        offset_index = pid_m * K + k_offset
        out_index_ptrs = out_index + offset_index
        mask1 = k_offset < K
        tl.store(out_index_ptrs, argmax_values, mask=mask1)


@libentry()
@triton.heuristics(runtime.get_heuristic_config("argmax_inner"))
@triton.jit
def argmax_kernel_inner(
    inp,
    out_index,
    M,
    N,
    TILE_N: tl.constexpr,
    ONE_TILE_PER_CTA: tl.constexpr,
):
    pid_m = tle.program_id(0)

    dtype = inp.type.element_ty
    min_value = get_dtype_min(dtype)

    if ONE_TILE_PER_CTA:
        n_offset = tl.arange(0, TILE_N)
        offset = pid_m * N + n_offset
        mask = n_offset < N
        inp_ptrs = inp + offset
        inp_vals = tl.load(inp_ptrs, mask=mask, other=min_value)
        local_max, local_argmax = tl.max(
            inp_vals, 0, return_indices=True, return_indices_tie_break_left=True
        )
        out_index_ptrs = out_index + pid_m
        tl.store(out_index_ptrs, local_argmax)
    else:
        max_values = min_value
        argmax_values = 0

        loop_time = N // TILE_N
        remainder = N % TILE_N
        for start_n in range(0, loop_time):
            n_offset = start_n * TILE_N + tl.arange(0, TILE_N)
            offset = pid_m * N + n_offset
            inp_ptrs = inp + offset
            inp_vals = tl.load(inp_ptrs)
            local_max, local_argmax = tl.max(
                inp_vals, 0, return_indices=True, return_indices_tie_break_left=True
            )
            update = local_max > max_values
            max_values = tl.where(update, local_max, max_values)
            argmax_values = tl.where(
                update, start_n * TILE_N + local_argmax, argmax_values
            )

        if remainder:
            n_offset = loop_time * TILE_N + tl.arange(0, TILE_N)
            offset = pid_m * N + n_offset
            mask = n_offset < N
            inp_ptrs = inp + offset
            inp_vals = tl.load(inp_ptrs, mask=mask, other=min_value)
            local_max, local_argmax = tl.max(
                inp_vals, 0, return_indices=True, return_indices_tie_break_left=True
            )
            update = local_max > max_values
            max_values = tl.where(update, local_max, max_values)
            argmax_values = tl.where(
                update, loop_time * TILE_N + local_argmax, argmax_values
            )

        out_index_ptrs = out_index + pid_m
        tl.store(out_index_ptrs, argmax_values)


def argmax(inp, dim=None, keepdim=False, *, dtype=None):
    logger.debug("GEMS ARGMAX")
    if dim is None:
        M = inp.numel()
        if dtype is None:
            dtype = inp.dtype
        block_size = triton.next_power_of_2(math.ceil(math.sqrt(M)))
        mid_size = triton.cdiv(M, block_size)
        block_mid = triton.next_power_of_2(mid_size)

        mid_value = torch.empty((mid_size,), dtype=dtype, device=inp.device)
        mid_index = torch.empty((mid_size,), dtype=torch.int64, device=inp.device)
        if keepdim:
            shape = list(inp.shape)
            for i in range(0, inp.dim()):
                shape[i] = 1
            out = torch.empty(shape, dtype=torch.int64, device=inp.device)
        else:
            out = torch.empty([], dtype=torch.int64, device=inp.device)

        with torch_device_fn.device(inp.device):
            argmax_kernel_1[(mid_size, 1, 1)](
                inp,
                mid_value,
                mid_index,
                M,
                block_size,
            )
            argmax_kernel_2[(1, 1, 1)](mid_value, mid_index, out, mid_size, block_mid)
        return out
    else:
        assert dim >= -inp.ndim and dim < inp.ndim, "Invalid dim"
        shape = inp.shape
        dim = dim % inp.ndim
        if inp.numel() == 0:
            out_shape = list(shape)
            if keepdim:
                out_shape[dim] = 1
            else:
                del out_shape[dim]
            return torch.zeros(out_shape, dtype=torch.int64, device=inp.device)
        N = shape[dim]
        M = math.prod(shape[:dim])
        K = inp.numel() // M // N

        inp = inp.contiguous()

        shape_list = list(shape)
        shape_list[dim] = 1
        out_index = torch.empty(shape_list, dtype=torch.int64, device=inp.device)
        if not keepdim:
            out_index = torch.squeeze(out_index, dim)

        with torch_device_fn.device(inp.device):
            if K > 1:
                grid = lambda meta: (
                    M,
                    triton.cdiv(K, meta["TILE_K"]),
                )
                argmax_kernel_non_inner[grid](
                    inp,
                    out_index,
                    M,
                    N,
                    K,
                )
            else:
                grid = lambda meta: (M, 1, 1)
                argmax_kernel_inner[grid](
                    inp,
                    out_index,
                    M,
                    N,
                )
        return out_index


def main():
    small = os.environ.get("LADDER_SIZE") == "small" or "--small" in sys.argv
    interpret = os.environ.get("TRITON_INTERPRET") == "1"
    device = "cpu" if interpret else "cuda"
    (rows, vocab), block, dtype = ((8, 3000), (64, 48), torch.float32) if small else ((256, 128256), (128256, 64), torch.bfloat16)
    logits = torch.randn(rows, vocab, device=device, dtype=dtype)
    tokens = argmax(logits, dim=-1)
    values = torch.randn(*block, device=device, dtype=dtype)
    top = argmax(values)
    if interpret:
        torch.testing.assert_close(tokens, logits.argmax(dim=-1))
        assert top.item() == values.argmax().item(), (top, values.argmax())


if __name__ == "__main__":
    main()
