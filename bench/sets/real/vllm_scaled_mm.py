# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: Copyright contributors to the vLLM project
#
# Source: vllm-project/vllm, vllm/model_executor/layers/quantization/compressed_tensors/triton_scaled_mm.py,
# release v0.33.0 (vllm 0.33.0). Copied unchanged except its vLLM imports: use_tensor_descriptor answers VLLM_TRITON_USE_TD
# unset on CUDA (off), set_triton_allocator is vllm/triton_utils/allocation.py's.
"""vLLM's Triton scaled GEMM for compressed-tensors W8A8: int8 x int8 -> int32 accumulate, per-token x
per-channel scales, bf16 out (its fallback when CUTLASS does not take the shape).

Realistic size: a Llama-3-8B W8A8 QKV projection, 4096 tokens x K 4096 -> N 6144, int8.
LADDER_SIZE=small (or --small): 16 tokens x K 64 -> N 32.
"""

import os
import sys
import torch

import triton
import triton.language as tl


def use_tensor_descriptor(override=None):
    """vllm.triton_utils.use_tensor_descriptor with VLLM_TRITON_USE_TD unset, on CUDA."""
    return bool(override) if override is not None else False


def set_triton_allocator(device: torch.device):
    def alloc_fn(size: int, alignment: int, stream):
        return torch.empty(size, device=device, dtype=torch.int8)

    triton.set_allocator(alloc_fn)

_TD_ALLOCATOR_DEVICES: set[torch.device] = set()


def is_weak_contiguous(x: torch.Tensor):
    strides = x.stride()
    sizes = x.shape
    is_not_transpose = strides[0] == 1 and (strides[1] >= max(1, sizes[0]))
    is_transpose = strides[1] == 1 and (strides[0] >= max(1, sizes[1]))
    return is_transpose or is_not_transpose


@triton.jit
def scaled_mm_kernel(
    a_ptr,
    b_ptr,
    scale_a_ptr,
    scale_b_ptr,
    c_ptr,
    bias_ptr,
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    ACCUMULATOR_DTYPE: tl.constexpr,
    BLOCK_SIZE_M: tl.constexpr,
    BLOCK_SIZE_N: tl.constexpr,
    BLOCK_SIZE_K: tl.constexpr,
    BLOCK_SIZE_SCALE_A: tl.constexpr,
    BLOCK_SIZE_SCALE_B: tl.constexpr,
    USE_TD: tl.constexpr = False,
    B_T: tl.constexpr = False,
):
    pid = tl.program_id(axis=0)

    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)

    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n

    accumulator_dtype = ACCUMULATOR_DTYPE
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=accumulator_dtype)

    # NOTE: Some tensor inputs are so large, they will cause int32 overflow
    # so it is necessary to use tl.int64 for all the offsets, else SEGV will
    # eventually occur.

    # Offsets and masks.
    offsets_am = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M).to(tl.int64)
    masks_am = offsets_am < M

    offsets_bn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N).to(tl.int64)
    masks_bn = offsets_bn < N

    offsets_k = tl.arange(0, BLOCK_SIZE_K).to(tl.int64)
    offsets_a = stride_am * offsets_am[:, None] + stride_ak * offsets_k[None, :]
    offsets_b = stride_bk * offsets_k[:, None] + stride_bn * offsets_bn[None, :]

    # NOTE: BLOCK_SIZE_SCALE_A could be 1 or BLOCK_SIZE_M, so need to create
    # appropriate offsets and masks for each case. Same goes for
    # BLOCK_SIZE_SCALE_B.
    offsets_scale_am = (
        tl.arange(0, BLOCK_SIZE_SCALE_A)
        + (BLOCK_SIZE_SCALE_A > 1) * pid_m * BLOCK_SIZE_M
    )
    masks_scale_am = offsets_scale_am < M

    offsets_scale_bn = (
        tl.arange(0, BLOCK_SIZE_SCALE_B)
        + (BLOCK_SIZE_SCALE_B > 1) * pid_n * BLOCK_SIZE_N
    )
    masks_scale_bn = offsets_scale_bn < N

    a_ptrs = a_ptr + offsets_a
    b_ptrs = b_ptr + offsets_b

    scale_a_ptrs = scale_a_ptr + offsets_scale_am
    scale_b_ptrs = scale_b_ptr + offsets_scale_bn

    if USE_TD:
        a_desc = tl.make_tensor_descriptor(
            a_ptr,
            shape=[M, K],
            strides=[stride_am, 1],
            block_shape=[BLOCK_SIZE_M, BLOCK_SIZE_K],
        )
        if B_T:
            # Checkpoint weights arrive as a transposed [N, K] view, so describe
            # the underlying N-major buffer and transpose each tile.
            b_desc = tl.make_tensor_descriptor(
                b_ptr,
                shape=[N, K],
                strides=[stride_bn, 1],
                block_shape=[BLOCK_SIZE_N, BLOCK_SIZE_K],
            )
        else:
            b_desc = tl.make_tensor_descriptor(
                b_ptr,
                shape=[K, N],
                strides=[stride_bk, 1],
                block_shape=[BLOCK_SIZE_K, BLOCK_SIZE_N],
            )

    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        if USE_TD:
            a = a_desc.load([pid_m * BLOCK_SIZE_M, k * BLOCK_SIZE_K])
            if B_T:
                b = tl.trans(b_desc.load([pid_n * BLOCK_SIZE_N, k * BLOCK_SIZE_K]))
            else:
                b = b_desc.load([k * BLOCK_SIZE_K, pid_n * BLOCK_SIZE_N])
        else:
            masks_k = offsets_k < K
            masks_a = masks_am[:, None] & masks_k[None, :]
            a = tl.load(a_ptrs, mask=masks_a)

            masks_b = masks_k[:, None] & masks_bn[None, :]
            b = tl.load(b_ptrs, mask=masks_b)

        # Accumulate results.
        accumulator = tl.dot(a, b, accumulator, out_dtype=accumulator_dtype)

        offsets_k += BLOCK_SIZE_K
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk

    # Apply scale at end.
    masks_scale_a = masks_scale_am[:, None] & (tl.arange(0, 1) < 1)[:, None]
    scale_a = tl.load(scale_a_ptrs[:, None], masks_scale_a)
    # Need to broadcast to the appropriate size, if scale_a is already
    # (BLOCK_SIZE_M, 1) then it will broadcast to its own shape. Same goes
    # for scale_b below.
    scale_a = scale_a.broadcast_to((BLOCK_SIZE_M, 1))
    accumulator = scale_a * accumulator.to(tl.float32)

    masks_scale_b = masks_scale_bn[:, None] & (tl.arange(0, 1) < 1)[None, :]
    scale_b = tl.load(scale_b_ptrs[:, None], masks_scale_b)
    scale_b = scale_b.broadcast_to((BLOCK_SIZE_N, 1))
    accumulator = scale_b.T * accumulator.to(tl.float32)

    # Add bias in accumulator dtype for less rounding error.
    if bias_ptr:
        offsets_bias = offsets_bn
        bias_ptrs = bias_ptr + offsets_bias
        bias_mask = offsets_bias < N
        bias = tl.load(bias_ptrs, bias_mask)
        accumulator += bias

    # Convert to output format.
    c = accumulator.to(c_ptr.type.element_ty)

    # Save output
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M).to(tl.int64)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N).to(tl.int64)
    offs_cm = offs_cm.to(tl.int64)
    offs_cn = offs_cn.to(tl.int64)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)

    tl.store(c_ptrs, c, mask=c_mask)


# input   - [M, K]
# weight - [K, N]
def triton_scaled_mm(
    input: torch.Tensor,
    weight: torch.Tensor,
    scale_a: torch.Tensor,
    scale_b: torch.Tensor,
    out_dtype: type[torch.dtype],
    bias: torch.Tensor | None = None,
    block_size_m: int = 32,
    block_size_n: int = 32,
    block_size_k: int = 32,
    use_heuristic=True,
    use_td: bool | None = None,
) -> torch.Tensor:
    M, K = input.shape
    N = weight.shape[1]

    assert N > 0 and K > 0 and M > 0
    assert weight.shape[0] == K
    assert input.dtype == weight.dtype

    scale_a = scale_a.reshape(-1, 1) if scale_a.dim() <= 1 else scale_a
    scale_b = scale_b.reshape(-1, 1) if scale_b.dim() <= 1 else scale_b

    assert scale_a.dtype == scale_b.dtype and scale_a.is_floating_point()
    assert scale_a.shape[1] == 1 and (scale_a.shape[0] == 1 or scale_a.shape[0] == M)
    assert scale_b.shape[1] == 1 and (scale_b.shape[0] == 1 or scale_b.shape[0] == N)
    assert out_dtype.is_floating_point
    assert bias is None or bias.is_floating_point()
    assert is_weak_contiguous(input)
    assert is_weak_contiguous(weight)

    grid = lambda META: (
        triton.cdiv(M, META["BLOCK_SIZE_M"]) * triton.cdiv(N, META["BLOCK_SIZE_N"]),
    )

    result = torch.empty((M, N), dtype=out_dtype, device=input.device)

    has_scalar = lambda x: x.shape[0] == 1 and x.shape[1] == 1

    if use_heuristic:
        is_small_N = N < 8192
        next_power_of_2_M = max(32, triton.next_power_of_2(M))
        if next_power_of_2_M <= 32:
            tile_shape = (64, 64, 256) if is_small_N else (64, 128, 256)
        elif next_power_of_2_M <= 64:
            tile_shape = (64, 64, 256)
        elif next_power_of_2_M <= 128:
            tile_shape = (64, 128, 128)
        else:
            tile_shape = (128, 128, 128)
    else:
        tile_shape = (block_size_m, block_size_n, block_size_k)

    block_size_m, block_size_n, block_size_k = tile_shape

    block_size_sa = 1 if has_scalar(scale_a) else block_size_m
    block_size_sb = 1 if has_scalar(scale_b) else block_size_n

    accumulator_dtype = tl.float32 if input.is_floating_point() else tl.int32

    # TD operand loads; gated on inner-dim contiguity and 16-byte tile alignment.
    # Checkpoint weights are a transposed [N, K] view, so accept either
    # orientation and let the kernel transpose per tile.
    b_t = weight.stride(1) != 1 and weight.stride(0) == 1
    b_inner = K if b_t else N
    use_td = (
        use_tensor_descriptor(use_td)
        and input.stride(1) == 1
        and (weight.stride(1) == 1 or b_t)
        and (K * input.element_size()) % 16 == 0
        and (b_inner * weight.element_size()) % 16 == 0
        and (block_size_m & (block_size_m - 1)) == 0
        and (block_size_n & (block_size_n - 1)) == 0
        and (block_size_k & (block_size_k - 1)) == 0
    )
    if use_td and input.device not in _TD_ALLOCATOR_DEVICES:
        set_triton_allocator(input.device)
        _TD_ALLOCATOR_DEVICES.add(input.device)

    # A = input, B = weight, C = result
    # A = M x K, B = K x N, C = M x N
    scaled_mm_kernel[grid](
        input,
        weight,
        scale_a,
        scale_b,
        result,
        bias,
        M,
        N,
        K,
        input.stride(0),
        input.stride(1),
        weight.stride(0),
        weight.stride(1),
        result.stride(0),
        result.stride(1),
        accumulator_dtype,
        BLOCK_SIZE_M=block_size_m,
        BLOCK_SIZE_N=block_size_n,
        BLOCK_SIZE_K=block_size_k,
        BLOCK_SIZE_SCALE_A=block_size_sa,
        BLOCK_SIZE_SCALE_B=block_size_sb,
        USE_TD=use_td,
        B_T=b_t,
    )

    return result.to(out_dtype)

def main():
    small = os.environ.get("LADDER_SIZE") == "small" or "--small" in sys.argv
    interpret = os.environ.get("TRITON_INTERPRET") == "1"
    device = "cpu" if interpret else "cuda"
    m, k, n = (16, 64, 32) if small else (4096, 4096, 6144)
    a = torch.randint(-127, 128, (m, k), device=device, dtype=torch.int8)
    b = torch.randint(-127, 128, (n, k), device=device, dtype=torch.int8).t()  # the checkpoint's [N, K] weight, transposed
    scale_a = torch.rand(m, 1, device=device) * 0.01
    scale_b = torch.rand(n, 1, device=device) * 0.01
    out_dtype = torch.float32 if small else torch.bfloat16
    y = triton_scaled_mm(a, b, scale_a, scale_b, out_dtype)
    if interpret:
        expected = (a.float() @ b.float()) * scale_a * scale_b.T
        torch.testing.assert_close(y, expected, atol=1e-4, rtol=1e-4)

if __name__ == "__main__":
    main()
