import torch
import torch.nn as nn
import triton
import triton.language as tl

try:
    import torch_npu  # noqa: F401
except ImportError:
    torch_npu = None


def vector_core_count():
    if torch_npu is not None:
        from triton.runtime import driver
        return driver.active.utils.get_device_properties(torch.npu.current_device())["num_vectorcore"]
    return 40


@triton.jit
def masked_fill_kernel(x_ptr, banned_ptr, out_ptr, n_elements, per_core, fill_value, SUB_BLOCK: tl.constexpr):
    core = tl.program_id(0)
    begin = core * per_core
    for off in range(0, per_core, SUB_BLOCK):
        idx = begin + off + tl.arange(0, SUB_BLOCK)
        mask = (idx < n_elements) & (idx < begin + per_core)
        x = tl.load(x_ptr + idx, mask=mask, other=0.0)
        banned = tl.load(banned_ptr + idx, mask=mask, other=0)
        y = tl.where(banned != 0, fill_value, x)
        tl.store(out_ptr + idx, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, banned):
        logits = logits.contiguous()
        banned = banned.contiguous()
        out = torch.empty_like(logits)
        n = logits.numel()
        cores = vector_core_count()
        per_core = triton.cdiv(n, cores)
        masked_fill_kernel[(cores,)](logits, banned, out, n, per_core, -10000.0, SUB_BLOCK=4096)
        return out
