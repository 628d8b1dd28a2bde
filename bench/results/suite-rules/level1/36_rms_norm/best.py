"""RMSNorm over dim 1: each program takes 64 spatial positions of one sample and all its features
as one (features, 64) tile, reduces over the features and writes the normalised tile."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({'BLOCK_S': 64}, num_warps=4, num_stages=3),
        triton.Config({'BLOCK_S': 32}, num_warps=4, num_stages=3),
        triton.Config({'BLOCK_S': 32}, num_warps=8, num_stages=3),
        triton.Config({'BLOCK_S': 128}, num_warps=4, num_stages=3),
        triton.Config({'BLOCK_S': 128}, num_warps=8, num_stages=3),
    ],
    key=['n_features', 'n_spatial'],
)
@triton.jit
def rms_norm_kernel(x_ptr, y_ptr, n_features, n_spatial, eps,
                    BLOCK_F: tl.constexpr, BLOCK_S: tl.constexpr):
    pid_s = tl.program_id(0)
    batch = tl.program_id(1)
    feats = tl.arange(0, BLOCK_F)
    spatial = pid_s * BLOCK_S + tl.arange(0, BLOCK_S)
    offsets = batch * n_features * n_spatial + feats[:, None] * n_spatial + spatial[None, :]
    mask = (feats[:, None] < n_features) & (spatial[None, :] < n_spatial)
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    mean_sq = tl.sum(x * x, axis=0) / n_features
    rms = tl.sqrt(mean_sq + eps)
    tl.store(y_ptr + offsets, x / rms[None, :], mask=mask)


class ModelNew(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-5):
        super().__init__()
        self.num_features = num_features
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        batch, n_features = x.shape[0], x.shape[1]
        n_spatial = x[0, 0].numel()
        y = torch.empty_like(x)
        BLOCK_S = 64
        rms_norm_kernel[lambda META: (triton.cdiv(n_spatial, META["BLOCK_S"]), batch)](x, y, n_features, n_spatial, self.eps,
                              BLOCK_F=triton.next_power_of_2(n_features))
        return y
