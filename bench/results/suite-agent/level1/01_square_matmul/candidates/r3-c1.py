"""Square matmul: an autotuned, pipelined Hopper GEMM whose operand loads are provably 16-byte wide
on every case.

The initial version ran one fixed 128x128x32 tile with 4 warps in row-major program order. Where N
is not a multiple of 16 (3000 and 4999), Triton could not prove the rows 16-byte aligned: the loads
were single fp16s, the pipeliner made no asynchronous copies, and the kernel spilled. Here:
- K, N and the row strides reach the kernel in units of 8 elements (multiplied back inside), so
  alignment that holds (N = 3000 is a multiple of 8) is visible to Triton; where it does not hold
  (4999), A and B are first copied once into zero-padded matrices whose sides are multiples of 8
  (one bandwidth pass, about 200 MB moved for N = 4999, a sixth of that GEMM's time at full
  speed) and the GEMM runs on the copies, writing C directly;
- tiles are Hopper-sized (wgmma, 128x256 and 128x128 with 3-4 stages and 8 warps), autotuned per
  size, and taken in groups of GROUP_M row tiles so that consecutive programs share B tiles in L2.
"""
import torch
import triton
import triton.language as tl
from torch import nn

UNIT = 8  # elements per 16 bytes of fp16


def _configs():
    shapes = [(128, 256, 64, 3, 8), (256, 128, 64, 3, 8), (128, 128, 64, 4, 8), (128, 128, 64, 3, 4),
              (64, 128, 64, 4, 4)]
    return [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8}, num_stages=s, num_warps=w)
            for m, n, k, s, w in shapes]


@triton.jit
def pad_kernel(src_ptr, dst_ptr, R, C, stride_src, padded_rows, padded_units,
               BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr, UNIT: tl.constexpr):
    padded_cols = padded_units * UNIT
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    value = tl.load(src_ptr + rows.to(tl.int64)[:, None] * stride_src + cols[None, :],
                    mask=(rows[:, None] < R) & (cols[None, :] < C), other=0.0)
    tl.store(dst_ptr + rows.to(tl.int64)[:, None] * padded_cols + cols[None, :], value,
             mask=(rows[:, None] < padded_rows) & (cols[None, :] < padded_cols))


@triton.autotune(configs=_configs(), key=["M", "n_units", "k_units"])
@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, c_ptr,
    M, n_units, k_units, b_cols_units, am_units, bk_units, cm_units,
    UNIT: tl.constexpr, C_UNIT: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    N = n_units * C_UNIT  # C's columns (the store's bound)
    K = k_units * UNIT
    b_cols = b_cols_units * UNIT  # B's columns as loaded (N, or N padded with zeros)
    stride_am = am_units * UNIT
    stride_bk = bk_units * UNIT
    stride_cm = cm_units * C_UNIT
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * tiles_n
    first_m = (pid // group) * GROUP_M
    rows_in_group = min(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % rows_in_group
    pid_n = (pid % group) // rows_in_group

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(tl.cdiv(K, BLOCK_K)):
        left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < left) & (offs_n[None, :] < b_cols), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk

    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def _whole_units(t):
    return t.shape[1] % UNIT == 0 and t.stride(0) % UNIT == 0 and t.stride(1) == 1 and t.data_ptr() % 16 == 0


def _padded(t, rows):
    """A copy of ``t`` with ``rows`` rows and its columns rounded up to a multiple of UNIT, zeros
    in what it adds."""
    r, c = t.shape
    cols = triton.cdiv(c, UNIT) * UNIT
    out = torch.empty((rows, cols), device=t.device, dtype=t.dtype)
    pad_kernel[(triton.cdiv(rows, 16), triton.cdiv(cols, 256))](
        t, out, r, c, t.stride(0), rows, cols // UNIT, BLOCK_R=16, BLOCK_C=256, UNIT=UNIT, num_warps=4)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        M, K = A.shape
        _, N = B.shape
        C = torch.empty((M, N), device=A.device, dtype=A.dtype)
        if not (_whole_units(A) and _whole_units(B)):
            k_padded = triton.cdiv(K, UNIT) * UNIT
            A, B = _padded(A, M), _padded(B, k_padded)  # B gains zero rows to match A's zero columns
        c_unit = UNIT if N % UNIT == 0 and C.stride(0) % UNIT == 0 else 1

        def grid(meta):
            return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)

        matmul_kernel[grid](
            A, B, C, M, N // c_unit, A.shape[1] // UNIT, B.shape[1] // UNIT,
            A.stride(0) // UNIT, B.stride(0) // UNIT, C.stride(0) // c_unit,
            UNIT=UNIT, C_UNIT=c_unit,
        )
        return C
