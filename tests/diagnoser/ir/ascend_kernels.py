"""A script of Triton-Ascend kernels, each with one property its performance guide warns about.

Run under the Triton-Ascend environment by `ladder.runner.ascend_ir` (launches compile, never run).
Markers `# @name` end the lines the facts must point at.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def gather_kernel(x_ptr, idx_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    idx = tl.load(idx_ptr + offs)
    vals = tl.load(x_ptr + idx)  # @gather-load
    tl.store(out_ptr + offs, vals)


@triton.jit
def masked_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1.0)  # @masked-load
    y = tl.where(offs > 7, x * 2, 0.0)  # @int-compare
    tl.store(out_ptr + offs, y, mask=offs < n)


@triton.jit
def int64_add_kernel(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(out_ptr + offs, x + y)  # @int64-add


@triton.jit
def whole_row_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)  # @big-load
    tl.store(out_ptr + offs, tl.exp(x) * x)


@triton.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    offs_m, offs_n, offs_k = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + offs_m[:, None] * K + offs_k[None, :])
    b = tl.load(b_ptr + offs_k[:, None] * N + offs_n[None, :])
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], tl.dot(a, b))


@triton.jit
def narrow_rows_kernel(x_ptr, out_ptr, ROWS: tl.constexpr, COLS: tl.constexpr):
    rows, cols = tl.arange(0, ROWS), tl.arange(0, COLS)
    x = tl.load(x_ptr + rows[:, None] * COLS + cols[None, :])  # @narrow-load
    tl.store(out_ptr + rows[:, None] * COLS + cols[None, :], x + 1)


if __name__ == "__main__":
    x = torch.randn(1 << 16)
    gather_kernel[(4,)](x, torch.zeros(1 << 16, dtype=torch.int32), x, BLOCK=1024)
    masked_kernel[(4,)](x, torch.empty_like(x), 4000, BLOCK=1024)
    wide = torch.zeros(1 << 12, dtype=torch.int64)
    int64_add_kernel[(4,)](wide, wide, wide, BLOCK=1024)
    whole_row_kernel[(1,)](x, torch.empty_like(x), BLOCK=65536)
    a = torch.randn(64, 64, dtype=torch.float16)
    dot_kernel[(1,)](a, a, torch.empty_like(a), M=64, N=64, K=64)
    narrow_rows_kernel[(1,)](x, torch.empty_like(x), ROWS=64, COLS=4)
