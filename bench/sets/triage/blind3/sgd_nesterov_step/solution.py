import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sgd_nesterov_kernel(p_ptr, g_ptr, b_ptr, p_out, b_out, n, lr, mu, wd, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    mask = offs < n
    p = tl.load(p_ptr + offs, mask=mask)
    g = tl.load(g_ptr + offs, mask=mask) + wd * p
    buf = mu * tl.load(b_ptr + offs, mask=mask) + g
    tl.store(b_out + offs, buf, mask=mask)
    tl.store(p_out + offs, p - lr * (g + mu * buf), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, lr, momentum, weight_decay):
        super().__init__()
        self.lr, self.momentum, self.weight_decay = lr, momentum, weight_decay

    def forward(self, param, grad, buf):
        n = param.numel()
        new_param = torch.empty_like(param)
        new_buf = torch.empty_like(buf)
        BLOCK = 2048
        sgd_nesterov_kernel[(triton.cdiv(n, BLOCK),)](param, grad, buf, new_param, new_buf, n,
                                                      self.lr, self.momentum, self.weight_decay,
                                                      BLOCK=BLOCK, num_warps=8)
        return new_param, new_buf
