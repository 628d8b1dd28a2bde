import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _adam_kernel(p_ptr, g_ptr, m_ptr, v_ptr, n, lr, beta1, beta2, eps, bc1, bc2, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    g = tl.load(g_ptr + offs, mask=mask)
    m = tl.load(m_ptr + offs, mask=mask) * beta1 + g * (1.0 - beta1)
    v = tl.load(v_ptr + offs, mask=mask) * beta2 + g * g * (1.0 - beta2)
    p = tl.load(p_ptr + offs, mask=mask) - lr * (m / bc1) / (tl.sqrt(v / bc2) + eps)
    tl.store(p_ptr + offs, p, mask=mask)
    tl.store(m_ptr + offs, m, mask=mask)
    tl.store(v_ptr + offs, v, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, lr, beta1, beta2, eps, step):
        super().__init__()
        self.lr, self.beta1, self.beta2, self.eps, self.step = lr, beta1, beta2, eps, step

    def forward(self, params, grads, exp_avgs, exp_avg_sqs):
        bc1 = 1 - self.beta1 ** self.step
        bc2 = 1 - self.beta2 ** self.step
        for p, g, m, v in zip(params, grads, exp_avgs, exp_avg_sqs):
            n = p.numel()
            _adam_kernel[(triton.cdiv(n, 1024),)](p, g, m, v, n, self.lr, self.beta1, self.beta2, self.eps, bc1, bc2,
                                                  BLOCK=1024, num_warps=4)
        return params, exp_avgs, exp_avg_sqs
