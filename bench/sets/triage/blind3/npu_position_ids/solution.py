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
def add_positions_kernel(pos_ptr, past_ptr, out_ptr, n_blocks, BLOCK: tl.constexpr):
    lanes = tl.arange(0, BLOCK)
    for blk in range(tl.program_id(0), n_blocks, tl.num_programs(0)):
        offs = blk * BLOCK + lanes
        pos = tl.load(pos_ptr + offs)
        past = tl.load(past_ptr + offs)
        tl.store(out_ptr + offs, pos + past)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, token_pos, past_len):
        out = torch.empty_like(token_pos)
        n = token_pos.numel()
        add_positions_kernel[(_vector_cores(),)](token_pos, past_len, out, n // 2048, BLOCK=2048)
        return out
