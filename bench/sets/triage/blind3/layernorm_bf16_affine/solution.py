import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _layer_norm_fwd(X, Y, W, B, stride, N, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    valid = cols < N
    x = tl.load(X + row * stride + cols, mask=valid, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    xc = tl.where(valid, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / N
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(W + cols, mask=valid, other=0.0).to(tl.float32)
    b = tl.load(B + cols, mask=valid, other=0.0).to(tl.float32)
    tl.store(Y + row * stride + cols, (xc * rstd * w + b).to(tl.bfloat16), mask=valid)


class ModelNew(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(hidden, eps=1e-5, dtype=torch.bfloat16)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.2, 0.2)

    def forward(self, x):
        M, N = x.shape
        y = torch.empty_like(x)
        BLOCK_N = triton.next_power_of_2(N)
        num_warps = min(max(BLOCK_N // 512, 4), 16)
        _layer_norm_fwd[(M,)](x, y, self.norm.weight, self.norm.bias, x.stride(0), N, self.norm.eps,
                              BLOCK_N=BLOCK_N, num_warps=num_warps)
        return y
