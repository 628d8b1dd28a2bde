import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sumsq_partials_kernel(x_ptr, partial_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    step = tl.num_programs(0) * BLOCK
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n, step):
        idx = start + offs
        v = tl.load(x_ptr + idx, mask=idx < n, other=0.0)
        acc += v * v
    tl.store(partial_ptr + pid, tl.sum(acc, axis=0))


@triton.jit
def sum_partials_kernel(partial_ptr, out_ptr, count, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    p = tl.load(partial_ptr + offs, mask=offs < count, other=0.0)
    tl.store(out_ptr, tl.sum(p, axis=0))


def _programs(device):
    """Two resident programs per SM: enough loads in flight to saturate HBM, one partial each."""
    try:
        return 2 * torch.cuda.get_device_properties(device).multi_processor_count
    except (AssertionError, RuntimeError, ValueError):  # no CUDA device (CPU interpreter)
        return 8


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, grads):
        n = grads.numel()
        programs = _programs(grads.device)
        partials = torch.empty(programs, device=grads.device, dtype=torch.float32)
        out = torch.empty(1, device=grads.device, dtype=torch.float32)
        sumsq_partials_kernel[(programs,)](grads, partials, n, BLOCK=4096, num_warps=8)
        sum_partials_kernel[(1,)](partials, out, programs, BLOCK=triton.next_power_of_2(programs))
        return out
