"""Small-K matmul: the general tiled GEMM (64 x 64 tiles, K in steps of 32) reused as is."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _zero_pad_kernel(src_ptr, dst_ptr, rows, cols, rows_padded, cols_padded, stride_sb, stride_sr, stride_sc,
                     BLOCK: tl.constexpr):
    """One row of the padded copy: the source's row where it has one, zeros past its extent."""
    program = tl.program_id(0).to(tl.int64)
    batch, row = program // rows_padded, program % rows_padded
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    inside = (row < rows) & (offs < cols)
    value = tl.load(src_ptr + batch * stride_sb + row * stride_sr + offs * stride_sc, mask=inside, other=0)
    tl.store(dst_ptr + program * cols_padded + offs, value, mask=offs < cols_padded)


def _up16(n):
    """`n` rounded up to a multiple of 16, the divisibility Triton's JIT specializes integers on."""
    return -(-n // 16) * 16


def _zero_padded(x):
    """`x` with its last two dimensions (a vector: its one) rounded up to multiples of 16, zeros
    beyond its data (`x` itself when they already are): the GEMM's loads and masks become provably
    aligned, and the zeros add nothing to any product or epilogue value that is kept."""
    rows, cols = (x.shape[-2] if x.dim() > 1 else 1), x.shape[-1]
    rows_padded = _up16(rows) if x.dim() > 1 else 1
    if rows == rows_padded and cols % 16 == 0:
        return x
    shape = (*x.shape[:-2], rows_padded, _up16(cols)) if x.dim() > 1 else (_up16(cols),)
    out = torch.empty(shape, device=x.device, dtype=x.dtype)
    if x.numel():
        batches = x.numel() // (rows * cols)
        stride_b, stride_r = (x.stride(0) if x.dim() == 3 else 0), (x.stride(-2) if x.dim() > 1 else 0)
        block = 1024
        _zero_pad_kernel[(batches * rows_padded, triton.cdiv(_up16(cols), block))](
            x, out, rows, cols, rows_padded, _up16(cols), stride_b, stride_r, x.stride(-1), BLOCK=block)
    return out


@triton.autotune(
    configs=[
        triton.Config({'BLOCK_K': 32, 'BLOCK_M': 64, 'BLOCK_N': 64}, num_warps=4, num_stages=3),
        triton.Config({'BLOCK_M': 128, 'BLOCK_N': 256, 'BLOCK_K': 64}, num_warps=8, num_stages=3),
        triton.Config({'BLOCK_M': 256, 'BLOCK_N': 128, 'BLOCK_K': 64}, num_warps=8, num_stages=3),
        triton.Config({'BLOCK_M': 128, 'BLOCK_N': 128, 'BLOCK_K': 64}, num_warps=8, num_stages=4),
        triton.Config({'BLOCK_M': 128, 'BLOCK_N': 128, 'BLOCK_K': 32}, num_warps=4, num_stages=4),
        triton.Config({'BLOCK_M': 128, 'BLOCK_N': 64, 'BLOCK_K': 64}, num_warps=4, num_stages=4),
        triton.Config({'BLOCK_M': 64, 'BLOCK_N': 128, 'BLOCK_K': 64}, num_warps=4, num_stages=4),
        triton.Config({'BLOCK_M': 64, 'BLOCK_N': 64, 'BLOCK_K': 64}, num_warps=4, num_stages=4),
        triton.Config({'BLOCK_M': 128, 'BLOCK_N': 32, 'BLOCK_K': 64}, num_warps=4, num_stages=4),
    ],
    key=['M', 'N', 'K', 'stride_am', 'stride_bk', 'stride_cm'],
)
@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] + k < K), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] + k < K) & (offs_n[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        M, K = A.shape
        N = B.shape[1]
        C = torch.empty((_up16(M), _up16(N)), device=A.device, dtype=A.dtype)
        A, B = _zero_padded(A), _zero_padded(B)
        matmul_kernel[lambda META: (triton.cdiv(M, META["BLOCK_M"]), triton.cdiv(N, META["BLOCK_N"]))](
            A, B, C, _up16(M), _up16(N), _up16(K),
            A.stride(0), A.stride(1), B.stride(0), B.stride(1), C.stride(0), C.stride(1),
        )
        return C[:M, :N]
