"""Three Triton kernels with known roofline behaviour, for checking the harness against the device
and against Nsight Compute: a memory-bound elementwise kernel, a row softmax, a bf16 matmul."""
from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x * 2.0 + 1.0, mask=mask)


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    numerator = tl.exp(x)
    tl.store(out_ptr + row * stride + cols, numerator / tl.sum(numerator, axis=0), mask=mask)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                  stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    grid_m, grid_n = tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N)
    group = pid // (GROUP_M * grid_n)
    first_m = group * GROUP_M
    size_m = min(grid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % size_m)
    pid_n = (pid % (GROUP_M * grid_n)) // size_m
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BLOCK_K)):
        acc += tl.dot(tl.load(a), tl.load(b))
        a += BLOCK_K * stride_ak
        b += BLOCK_K * stride_bk
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, acc.to(tl.bfloat16),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def scale(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    scale_kernel[(triton.cdiv(n, 4096),)](x, out, n, BLOCK=4096, num_warps=8)
    return out


def softmax(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    rows, cols = x.shape
    softmax_kernel[(rows,)](x, out, cols, x.stride(0), BLOCK=triton.next_power_of_2(cols), num_warps=8)
    return out


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """bf16 matmul for shapes that are multiples of the block sizes (no K masking)."""
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.bfloat16)
    grid = (triton.cdiv(M, 128) * triton.cdiv(N, 256),)
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                        c.stride(0), c.stride(1), BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8,
                        num_warps=8, num_stages=3)
    return c


# name -> (function, make inputs on a device from a seed, bytes moved, flops)
def workloads(device: str = "cuda") -> dict:
    def elementwise(seed: int) -> list:
        generator = torch.Generator(device=device).manual_seed(seed)
        return [torch.randn(1 << 27, device=device, generator=generator)]

    def rows(seed: int) -> list:
        generator = torch.Generator(device=device).manual_seed(seed)
        return [torch.randn(16384, 4096, device=device, generator=generator)]

    def square(seed: int) -> list:
        generator = torch.Generator(device=device).manual_seed(seed)
        return [torch.randn(8192, 8192, device=device, generator=generator, dtype=torch.bfloat16)
                for _ in range(2)]

    return {
        "elementwise": (scale, elementwise, 2 * 4 * (1 << 27), None, "scale_kernel"),
        "softmax": (softmax, rows, 2 * 4 * 16384 * 4096, None, "softmax_kernel"),
        "matmul": (matmul, square, 3 * 2 * 8192 * 8192, 2 * 8192 ** 3, "matmul_kernel"),
    }
