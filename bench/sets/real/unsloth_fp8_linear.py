# Copyright 2023-present Daniel Han-Chen & the Unsloth team. All rights reserved.
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#     http://www.apache.org/licenses/LICENSE-2.0
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
#
# Source: unslothai/unsloth, unsloth/kernels/fp8.py, release 2026.10.9 (unsloth 2026.10.9).
# act_quant_kernel is marked there as copied from DeepSeek-V3's inference/kernel.py, and
# _w8a8_block_fp8_matmul as adapted from SGLang's fp8_kernel.py. Both kernels and act_quant copied
# unchanged; w8a8_block_fp8_matmul_triton keeps its non-TMA launch (the TMA variant's self-check and
# the torch.compile wrappers are left out); long_indexing is a plain int32-range check.
"""Unsloth FP8 linear: per-token-group activation quantization (1 x 128) and the block-scaled FP8 GEMM.

Realistic size: a DeepSeek-V3-style FP8 projection in a fine-tune, 8192 tokens x K 7168 -> N 4096,
128 x 128 weight scale blocks, bf16 output.
LADDER_SIZE=small (or --small): 16 tokens x K 256 -> N 256, fp32 output.
"""
import os
import sys
from contextlib import nullcontext

import torch
import triton
import triton.language as tl


def long_indexing(*tensors):
    """Whether an offset into any of these tensors can pass the int32 range."""
    return any(t.numel() > 2**31 for t in tensors)


def _fp8_triton_device_context(tensor):
    return torch.cuda.device(tensor.device) if tensor.device.type == "cuda" and torch.cuda.device_count() > 1 else nullcontext()


@triton.jit
def act_quant_kernel(
    x_ptr,
    y_ptr,
    s_ptr,
    BLOCK_SIZE: tl.constexpr,
    LONG_INDEXING: tl.constexpr = False,
):
    pid = tl.program_id(axis = 0)
    if LONG_INDEXING:
        offs = pid.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE).to(tl.int64)
    else:
        offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + offs).to(tl.float32)
    s = tl.max(tl.abs(x)) / 448.0
    # All-zero row: keep scale at 1 so LoRA's zero dY does not become NaN (a deviation from the original
    # implementation).
    s = 1.0 if s == 0 else s
    y = x / s
    y = y.to(y_ptr.dtype.element_ty)
    tl.store(y_ptr + offs, y)
    tl.store(s_ptr + pid, s)


def act_quant(x: torch.Tensor, block_size: int = 128) -> tuple[torch.Tensor, torch.Tensor]:
    if not x.is_contiguous():
        x = x.contiguous()
    assert x.shape[-1] % block_size == 0
    y = torch.empty_like(x, dtype = torch.float8_e4m3fn)
    s = x.new_empty(*x.size()[:-1], x.size(-1) // block_size, dtype = torch.float32)

    def grid(meta):
        return (triton.cdiv(x.numel(), meta["BLOCK_SIZE"]),)

    with _fp8_triton_device_context(x):
        act_quant_kernel[grid](
            x, y, s, BLOCK_SIZE = block_size, LONG_INDEXING = long_indexing(x), enable_fp_fusion = True
        )
    return y, s


@triton.jit
def _w8a8_block_fp8_matmul(
    A,
    B,
    C,
    As,
    Bs,
    M,
    N,
    K,
    # Block size for block-wise quantization
    group_n,
    group_k,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    stride_As_m,
    stride_As_k,
    stride_Bs_k,
    stride_Bs_n,
    BLOCK_SIZE_M: tl.constexpr,
    BLOCK_SIZE_N: tl.constexpr,
    BLOCK_SIZE_K: tl.constexpr,
    GROUP_SIZE_M: tl.constexpr,
    LONG_INDEXING: tl.constexpr = False,
):
    """Triton-accelerated function used to perform linear operations (dot
    product) on input tensors `A` and `B` with block-wise quantization, and
    store the result in output tensor `C`.
    """

    pid = tl.program_id(axis = 0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + (pid % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    if LONG_INDEXING:
        offs_am = offs_am.to(tl.int64)
        offs_bn = offs_bn.to(tl.int64)
    a_ptrs = A + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = B + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)

    As_ptrs = As + offs_am * stride_As_m
    offs_bsn = offs_bn // group_n
    Bs_ptrs = Bs + offs_bsn * stride_Bs_n

    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype = tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask = offs_k[None, :] < K - k * BLOCK_SIZE_K, other = 0.0)
        b = tl.load(b_ptrs, mask = offs_k[:, None] < K - k * BLOCK_SIZE_K, other = 0.0)

        k_start = k * BLOCK_SIZE_K
        offs_ks = k_start // group_k
        a_s = tl.load(As_ptrs + offs_ks * stride_As_k)
        b_s = tl.load(Bs_ptrs + offs_ks * stride_Bs_k)

        accumulator += tl.dot(a, b) * a_s[:, None] * b_s[None, :]
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk

    if C.dtype.element_ty == tl.bfloat16:
        c = accumulator.to(tl.bfloat16)
    elif C.dtype.element_ty == tl.float16:
        c = accumulator.to(tl.float16)
    else:
        c = accumulator.to(tl.float32)

    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    if LONG_INDEXING:
        offs_cm = offs_cm.to(tl.int64)
        offs_cn = offs_cn.to(tl.int64)
    c_ptrs = C + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask = c_mask)


def w8a8_block_fp8_matmul_triton(A, B, As, Bs, block_size, output_dtype=torch.float32):
    """Block-wise FP8 matmul."""
    if block_size is None:
        block_n, block_k = 128, 128
    else:
        assert len(block_size) == 2
        block_n, block_k = block_size[0], block_size[1]

    N, K = B.shape
    assert A.shape[-1] == B.shape[-1]
    assert A.shape[:-1] == As.shape[:-1] and A.is_contiguous()
    assert triton.cdiv(A.shape[-1], block_k) == As.shape[-1]
    assert B.ndim == 2 and B.is_contiguous() and Bs.ndim == 2
    assert triton.cdiv(N, block_n) == Bs.shape[0]
    assert triton.cdiv(K, block_k) == Bs.shape[1]

    M = A.numel() // A.shape[-1]
    C_shape = A.shape[:-1] + (N,)
    C = A.new_empty(C_shape, dtype = output_dtype)

    BLOCK_SIZE_M = 128
    if M < BLOCK_SIZE_M:
        BLOCK_SIZE_M = max(triton.next_power_of_2(M), 16)
    BLOCK_SIZE_K, BLOCK_SIZE_N = block_k, block_n

    def grid(META):
        return (triton.cdiv(M, META["BLOCK_SIZE_M"]) * triton.cdiv(N, META["BLOCK_SIZE_N"]),)

    LONG_INDEXING = long_indexing(A, B, C)
    with _fp8_triton_device_context(A):
        _w8a8_block_fp8_matmul[grid](
            A, B, C, As, Bs, M, N, K, block_n, block_k,
            A.stride(-2), A.stride(-1), B.stride(1), B.stride(0), C.stride(-2), C.stride(-1),
            As.stride(-2), As.stride(-1), Bs.stride(1), Bs.stride(0),
            BLOCK_SIZE_M = BLOCK_SIZE_M,
            BLOCK_SIZE_N = BLOCK_SIZE_N,
            BLOCK_SIZE_K = BLOCK_SIZE_K,
            GROUP_SIZE_M = 8,
            LONG_INDEXING = LONG_INDEXING,
            num_warps = 8 if BLOCK_SIZE_M == 128 else 4,
            enable_fp_fusion = True,
        )
    return C


def main():
    small = os.environ.get("LADDER_SIZE") == "small" or "--small" in sys.argv
    interpret = os.environ.get("TRITON_INTERPRET") == "1"
    device = "cpu" if interpret else "cuda"
    tokens, k, n, out_dtype = (16, 256, 256, torch.float32) if small else (8192, 7168, 4096, torch.bfloat16)
    x = torch.randn(tokens, k, device=device, dtype=torch.bfloat16 if not small else torch.float32)
    weight = (torch.randn(n, k, device=device) * 0.05).to(torch.float8_e4m3fn)
    weight_scale = torch.rand(triton.cdiv(n, 128), triton.cdiv(k, 128), device=device) * 0.01 + 0.001
    xq, xs = act_quant(x, 128)
    y = w8a8_block_fp8_matmul_triton(xq, weight, xs, weight_scale, [128, 128], output_dtype=out_dtype)
    if interpret:
        # the GEMM against the dequantized operands it was given (Triton 3.6's interpreter rounds some
        # float32 -> fp8e4nv casts of powers of two down by one binade, so xq is not compared with torch's cast)
        dequant_x = (xq.float().view(tokens, -1, 128) * xs[..., None]).view(tokens, k)
        w = weight.float() * weight_scale.repeat_interleave(128, 0)[:n].repeat_interleave(128, 1)[:, :k]
        torch.testing.assert_close(y.float(), dequant_x @ w.T, atol=1e-2, rtol=1e-2)

if __name__ == "__main__":
    main()
