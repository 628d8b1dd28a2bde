import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _assign_kernel(x_ptr, c_ptr, out_ptr, n_points, n_clusters, dim,
                   BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr, BLOCK_D: tl.constexpr):
    offs_p = tl.program_id(0) * BLOCK_P + tl.arange(0, BLOCK_P)
    offs_d = tl.arange(0, BLOCK_D)
    best_d = tl.full((BLOCK_P,), float("inf"), dtype=tl.float32)
    best_i = tl.zeros((BLOCK_P,), dtype=tl.int32)
    for c0 in range(0, n_clusters, BLOCK_C):
        offs_c = c0 + tl.arange(0, BLOCK_C)
        dist = tl.zeros((BLOCK_P, BLOCK_C), dtype=tl.float32)
        for d0 in range(0, dim, BLOCK_D):
            dd = d0 + offs_d
            x = tl.load(x_ptr + offs_p[:, None] * dim + dd[None, :],
                        mask=(offs_p[:, None] < n_points) & (dd[None, :] < dim), other=0.0)
            c = tl.load(c_ptr + offs_c[:, None] * dim + dd[None, :],
                        mask=(offs_c[:, None] < n_clusters) & (dd[None, :] < dim), other=0.0)
            diff = x[:, None, :] - c[None, :, :]
            dist += tl.sum(diff * diff, axis=2)
        dist = tl.where(offs_c[None, :] < n_clusters, dist, float("inf"))
        blk_d = tl.min(dist, axis=1)
        blk_i = tl.argmin(dist, axis=1) + c0
        better = blk_d < best_d
        best_i = tl.where(better, blk_i, best_i)
        best_d = tl.where(better, blk_d, best_d)
    tl.store(out_ptr + offs_p, best_i.to(tl.int64), mask=offs_p < n_points)


class ModelNew(nn.Module):
    def forward(self, points, centroids):
        n, dim = points.shape
        c = centroids.shape[0]
        out = torch.empty(n, device=points.device, dtype=torch.int64)
        BLOCK_P = 16
        _assign_kernel[(triton.cdiv(n, BLOCK_P),)](points, centroids, out, n, c, dim,
                                                   BLOCK_P=BLOCK_P, BLOCK_C=16, BLOCK_D=32, num_warps=4)
        return out
