"""Small kernels, each with one IR property the extractors must report on the marked line.

A marker comment `# @name` ends the line a fact must point at; `line_of("@name")` finds it, so
the tests never hard-code line numbers. `LAUNCHES` maps a case name to a function that launches
kernels on CPU tensors (the aot backend compiles them for sm_90 instead of running them).
"""
from __future__ import annotations

from pathlib import Path

import torch
import triton
import triton.language as tl

SOURCE = Path(__file__).resolve()


def line_of(marker: str) -> int:
    for number, text in enumerate(SOURCE.read_text().splitlines(), start=1):
        if text.rstrip().endswith(f"# {marker}"):
            return number
    raise KeyError(marker)


@triton.jit
def copy_kernel(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(src + offs, mask=offs < n)  # @copy-load
    tl.store(dst + offs, x, mask=offs < n)  # @copy-store


@triton.jit
def strided_kernel(src, dst, n, stride, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(src + offs * stride, mask=offs < n)  # @strided-load
    tl.store(dst + offs, x, mask=offs < n)


@triton.jit
def pressure_kernel(src, dst, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(src + offs)
    y = tl.exp(x) * tl.sin(x) + tl.cos(x) * tl.sqrt(tl.abs(x))  # @pressure-math
    z = tl.sum(y * x, axis=0)
    tl.store(dst + offs, y * z + x)


@triton.jit
def transpose_loop_kernel(src, dst, n_tiles, BLOCK: tl.constexpr):
    rows = tl.arange(0, BLOCK)
    cols = tl.arange(0, BLOCK)
    for t in range(0, n_tiles):
        tile = tl.load(src + t * BLOCK * BLOCK + rows[:, None] * BLOCK + cols[None, :])
        tl.store(dst + t * BLOCK * BLOCK + rows[:, None] * BLOCK + cols[None, :], tl.trans(tile))  # @transpose-store


@triton.jit
def matmul_kernel(a, b, c, M, N, K, stride_am, stride_bk, stride_cm,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b + offs_k[:, None] * stride_bk + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):  # @matmul-loop
        x = tl.load(a_ptrs)  # @matmul-load-a
        y = tl.load(b_ptrs)
        acc += tl.dot(x, y)  # @matmul-dot
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    tl.store(c + offs_m[:, None] * stride_cm + offs_n[None, :], acc.to(c.dtype.element_ty))


@triton.jit
def fp32_dot_kernel(a, b, c, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(a + offs[:, None] * BLOCK + offs[None, :])
    y = tl.load(b + offs[:, None] * BLOCK + offs[None, :])
    z = tl.dot(x, y, input_precision="ieee")  # @ieee-dot
    tl.store(c + offs[:, None] * BLOCK + offs[None, :], z)


@triton.jit
def int64_offsets_kernel(src, dst, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)  # @int64-offsets
    x = tl.load(src + offs, mask=offs < n)
    tl.store(dst + offs, x, mask=offs < n)


@triton.jit
def divrem_loop_kernel(src, dst, n_iter, width, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.float32)
    for i in range(0, n_iter):
        row = (offs + i) // width  # @divrem-div
        col = (offs + i) % width  # @divrem-rem
        quarter = (offs + i) // 4  # @divrem-constant
        acc += tl.load(src + row * width + col + quarter)
    tl.store(dst + offs, acc)


@triton.jit
def atomic_kernel(src, total, maxima, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(src + offs, mask=offs < n, other=0.0)
    tl.atomic_add(total, tl.sum(x, axis=0))  # @atomic-add
    for i in range(0, 4):
        tl.atomic_max(maxima + i * BLOCK + tl.arange(0, BLOCK), x.to(tl.int32), sem="relaxed", scope="cta")  # @atomic-max


@triton.jit
def reduce_loop_kernel(src, dst, n_rows, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    best = tl.zeros((BLOCK,), tl.float32)
    for r in range(0, n_rows):
        x = tl.load(src + r * BLOCK + cols)
        best += x - tl.max(x, axis=0)  # @reduce-max
    tl.store(dst + cols, best)


@triton.jit
def barrier_loop_kernel(src, dst, n_iter, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.float32)
    for i in range(0, n_iter):
        acc += tl.load(src + i * BLOCK + offs)
        tl.debug_barrier()  # @barrier
    tl.store(dst + offs, acc)


@triton.autotune(configs=[triton.Config({"BLOCK": 1024}, num_warps=4), triton.Config({"BLOCK": 256}, num_warps=2)],
                 key=["n"])
@triton.jit
def autotuned_copy_kernel(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)


@triton.heuristics({"BLOCK": lambda args: 512 if args["n"] < 10000 else 2048})
@triton.jit
def heuristic_copy_kernel(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)


@triton.jit
def tma_copy_kernel(in_desc, out_desc, BLOCK: tl.constexpr):
    tile = in_desc.load([tl.program_id(0) * BLOCK, 0])  # @tma-load
    out_desc.store([tl.program_id(0) * BLOCK, 0], tile)  # @tma-store


@triton.jit
def row_offset_kernel(src, dst, row_stride, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * row_stride + tl.arange(0, BLOCK)  # @row-offset
    scale = tl.load(dst)  # @scalar-load
    tl.store(dst + tl.arange(0, BLOCK), tl.load(src + offs) * scale)


# ---------------------------------------------------------------------------------------------
# Launches (CPU tensors; under the aot backend nothing executes)
# ---------------------------------------------------------------------------------------------

def _copy(n: int, offset: int = 0, dtype: torch.dtype = torch.float32) -> None:
    x = torch.empty(n + 16, dtype=dtype)
    copy_kernel[(triton.cdiv(n, 1024),)](x[offset:], torch.empty_like(x), n, BLOCK=1024)


def _matmul(block_m: int, block_n: int, block_k: int, num_warps: int, num_stages: int, size: int = 512) -> None:
    a = torch.empty(size, size, dtype=torch.float16)
    grid = (size // block_m, size // block_n)
    matmul_kernel[grid](a, a, torch.empty_like(a), size, size, size, size, size, size, BLOCK_M=block_m,
                        BLOCK_N=block_n, BLOCK_K=block_k, num_warps=num_warps, num_stages=num_stages)


def _tma_copy() -> None:
    from triton.tools.tensor_descriptor import TensorDescriptor

    x = torch.empty(256, 64)
    tma_copy_kernel[(4,)](TensorDescriptor.from_tensor(x, [64, 64]), TensorDescriptor.from_tensor(x, [64, 64]),
                          BLOCK=64)


def _pressure() -> None:
    x = torch.empty(1 << 14)
    pressure_kernel[(16,)](x, torch.empty_like(x), BLOCK=1024, num_warps=1, maxnreg=32)


LAUNCHES = {
    "copy_aligned": lambda: _copy(4096),
    "copy_misaligned": lambda: _copy(4096, offset=1),
    "copy_odd_size": lambda: _copy(4099),
    "copy_fp16": lambda: _copy(4096, dtype=torch.float16),
    "strided": lambda: strided_kernel[(4,)](torch.empty(1 << 14), torch.empty(4096), 4096, 3, BLOCK=1024),
    "pressure": _pressure,
    "transpose_loop": lambda: transpose_loop_kernel[(1,)](torch.empty(1 << 14), torch.empty(1 << 14), 4, BLOCK=64),
    "matmul_hmma": lambda: _matmul(16, 64, 32, num_warps=4, num_stages=3),
    "matmul_hgmma": lambda: _matmul(128, 128, 64, num_warps=8, num_stages=3),
    "matmul_unpipelined": lambda: _matmul(128, 128, 64, num_warps=8, num_stages=1),
    "matmul_big_tiles": lambda: _matmul(128, 128, 64, num_warps=4, num_stages=4),
    "fp32_dot": lambda: fp32_dot_kernel[(1,)](torch.empty(32, 32), torch.empty(32, 32), torch.empty(32, 32), BLOCK=32),
    "int64_offsets": lambda: int64_offsets_kernel[(4,)](torch.empty(4096), torch.empty(4096), 4096, BLOCK=1024),
    "divrem_loop": lambda: divrem_loop_kernel[(2,)](torch.empty(1 << 14), torch.empty(512), 8, 33, BLOCK=256),
    "atomics": lambda: atomic_kernel[(4,)](torch.empty(4096), torch.empty(1), torch.empty(4096, dtype=torch.int32),
                                           4096, BLOCK=1024),
    "reduce_loop": lambda: reduce_loop_kernel[(1,)](torch.empty(1 << 14), torch.empty(1024), 16, BLOCK=1024),
    "reduce_loop_one_warp": lambda: reduce_loop_kernel[(1,)](torch.empty(1 << 14), torch.empty(256), 16, BLOCK=256,
                                                             num_warps=1),
    "barrier_loop": lambda: barrier_loop_kernel[(1,)](torch.empty(1 << 14), torch.empty(1024), 16, BLOCK=1024),
    "tma_copy": _tma_copy,
    # a row stride past 2**31 makes Triton specialize it as i64: every element's offset is 64-bit
    "wide_row_stride": lambda: row_offset_kernel[(2,)](torch.empty(1024), torch.empty(1024), 2**31 + 16, BLOCK=1024),
    "narrow_row_stride": lambda: row_offset_kernel[(2,)](torch.empty(1024), torch.empty(1024), 1024, BLOCK=1024),
    "autotuned": lambda: autotuned_copy_kernel[lambda meta: (triton.cdiv(4096, meta["BLOCK"]),)](
        torch.empty(4096), torch.empty(4096), 4096),
    "heuristics": lambda: heuristic_copy_kernel[lambda meta: (triton.cdiv(4096, meta["BLOCK"]),)](
        torch.empty(4096), torch.empty(4096), 4096),
}
