import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _adamw_kernel(p_ptr, g_ptr, m_ptr, v_ptr, n, lr, beta1, beta2, eps, decay, step_size, inv_sqrt_bc2,
                  BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    p = tl.load(p_ptr + offs, mask=mask)
    g = tl.load(g_ptr + offs, mask=mask)
    m = tl.load(m_ptr + offs, mask=mask)
    v = tl.load(v_ptr + offs, mask=mask)
    p = p * decay
    m = m * beta1 + g * (1.0 - beta1)
    v = v * beta2 + g * g * (1.0 - beta2)
    p = p - step_size * m / (tl.sqrt(v) * inv_sqrt_bc2 + eps)
    tl.store(p_ptr + offs, p, mask=mask)
    tl.store(m_ptr + offs, m, mask=mask)
    tl.store(v_ptr + offs, v, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, lr, beta1, beta2, eps, weight_decay, step):
        super().__init__()
        self.lr, self.beta1, self.beta2, self.eps, self.wd, self.step = lr, beta1, beta2, eps, weight_decay, step

    def forward(self, param, grad, exp_avg, exp_avg_sq):
        n = param.numel()
        bc1 = 1 - self.beta1 ** self.step
        bc2 = 1 - self.beta2 ** self.step
        block = 2048
        _adamw_kernel[(triton.cdiv(n, block),)](
            param, grad, exp_avg, exp_avg_sq, n, self.lr, self.beta1, self.beta2, self.eps,
            1 - self.lr * self.wd, self.lr / bc1, 1 / bc2 ** 0.5, BLOCK=block, num_warps=8,
        )
        return param, exp_avg, exp_avg_sq
