import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gemv_kernel(w_ptr, x_ptr, y_ptr, N, K, stride_wn, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    row_mask = rows < N
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k = k0 + ks
        x = tl.load(x_ptr + k, mask=k < K, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + rows[:, None] * stride_wn + k[None, :],
                    mask=row_mask[:, None] & (k[None, :] < K), other=0.0).to(tl.float32)
        acc += tl.sum(w * x[None, :], axis=1)
    tl.store(y_ptr + rows, acc.to(y_ptr.dtype.element_ty), mask=row_mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.proj = nn.Linear(in_features, out_features, bias=False, dtype=torch.float16)

    def forward(self, x):
        w = self.proj.weight
        N, K = w.shape
        x = x.contiguous()
        y = torch.empty((x.shape[0], N), device=x.device, dtype=x.dtype)
        gemv_kernel[(triton.cdiv(N, 64),)](w, x, y, N, K, w.stride(0), BLOCK_N=64, BLOCK_K=256, num_warps=4)
        return y
