import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def head_rmsnorm_kernel(x_ptr, w_ptr, y_ptr, eps, HEAD_DIM: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, HEAD_DIM)
    x = tl.load(x_ptr + row * HEAD_DIM + offs).to(tl.float32)
    w = tl.load(w_ptr + offs)
    mean_sq = tl.sum(x * x, axis=0) / HEAD_DIM
    y = x * tl.rsqrt(mean_sq + eps) * w
    tl.store(y_ptr + row * HEAD_DIM + offs, y.to(y_ptr.dtype.element_ty))


class ModelNew(nn.Module):
    def __init__(self, head_dim, eps):
        super().__init__()
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(head_dim))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        head_dim = x.shape[-1]
        y = torch.empty_like(x)
        n_rows = x.numel() // head_dim
        head_rmsnorm_kernel[(n_rows,)](x, self.weight, y, self.eps, HEAD_DIM=head_dim)
        return y
