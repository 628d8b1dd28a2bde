"""GEMM + bias + ReLU in one kernel: 64 x 128 tiles, the bias add and ReLU in the epilogue."""
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
        triton.Config({'BLOCK_K': 32, 'BLOCK_M': 64, 'BLOCK_N': 128}, num_warps=4, num_stages=3),
        triton.Config({'BLOCK_M': 128, 'BLOCK_N': 256, 'BLOCK_K': 64}, num_warps=8, num_stages=3),
        triton.Config({'BLOCK_M': 256, 'BLOCK_N': 128, 'BLOCK_K': 64}, num_warps=8, num_stages=3),
        triton.Config({'BLOCK_M': 128, 'BLOCK_N': 128, 'BLOCK_K': 64}, num_warps=8, num_stages=4),
        triton.Config({'BLOCK_M': 128, 'BLOCK_N': 128, 'BLOCK_K': 32}, num_warps=4, num_stages=4),
        triton.Config({'BLOCK_M': 128, 'BLOCK_N': 64, 'BLOCK_K': 64}, num_warps=4, num_stages=4),
        triton.Config({'BLOCK_M': 64, 'BLOCK_N': 128, 'BLOCK_K': 64}, num_warps=4, num_stages=4),
        triton.Config({'BLOCK_M': 64, 'BLOCK_N': 64, 'BLOCK_K': 64}, num_warps=4, num_stages=4),
        triton.Config({'BLOCK_M': 128, 'BLOCK_N': 32, 'BLOCK_K': 64}, num_warps=4, num_stages=4),
    ],
    key=['M', 'N', 'K', 'stride_xm', 'stride_wn', 'stride_ym'],
)
@triton.jit
def gemm_bias_relu_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
    M, N, K,
    stride_xm, stride_xk,
    stride_wn, stride_wk,
    stride_ym, stride_yn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr = 8,
):
    pid = tl.program_id(1) * tl.num_programs(0) + tl.program_id(0)
    num_pid_m = tl.num_programs(0)
    num_pid_n = tl.num_programs(1)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k = k0 + offs_k
        x = tl.load(x_ptr + offs_m[:, None] * stride_xm + k[None, :] * stride_xk,
                    mask=(offs_m[:, None] < M) & (k[None, :] < K), other=0.0)
        w = tl.load(w_ptr + k[:, None] * stride_wk + offs_n[None, :] * stride_wn,
                    mask=(k[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        acc += tl.dot(x, w)

    bias = tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
    y = tl.maximum(acc + bias[None, :], 0.0)
    tl.store(y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn,
             y.to(y_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False, dtype=torch.bfloat16)
        self.bias = nn.Parameter(torch.randn(bias_shape, dtype=torch.bfloat16))

    def forward(self, x):
        M, K = x.shape
        w = self.gemm.weight
        N = w.shape[0]
        y = torch.empty((_up16(M), _up16(N)), device=x.device, dtype=x.dtype)
        BLOCK_M, BLOCK_N, BLOCK_K = 64, 128, 32
        x, w = _zero_padded(x), _zero_padded(w)
        gemm_bias_relu_kernel[lambda META: (triton.cdiv(M, META["BLOCK_M"]), triton.cdiv(N, META["BLOCK_N"]))](
            x, w, _zero_padded(self.bias), y, _up16(M), _up16(N), _up16(K),
            x.stride(0), x.stride(1), w.stride(0), w.stride(1), y.stride(0), y.stride(1),
        )
        return y[:M, :N]
