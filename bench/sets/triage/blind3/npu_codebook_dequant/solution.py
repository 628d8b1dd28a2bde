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
def codebook_dequant_kernel(codes_ptr, absmax_ptr, cb_ptr, out_ptr, n_tiles,
                            QBLOCK: tl.constexpr, BLOCKS: tl.constexpr):
    b = tl.arange(0, BLOCKS)
    e = tl.arange(0, QBLOCK)
    for tile in range(tl.program_id(0), n_tiles, tl.num_programs(0)):
        blocks = tile * BLOCKS + b
        offs = blocks[:, None] * QBLOCK + e[None, :]
        codes = tl.load(codes_ptr + offs).to(tl.int32)
        values = tl.load(cb_ptr + codes)
        scale = tl.load(absmax_ptr + blocks)
        tl.store(out_ptr + offs, (values * scale[:, None]).to(tl.float16))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("codebook", torch.linspace(-1.0, 1.0, 16))

    def forward(self, codes, absmax):
        out = torch.empty(codes.numel(), device=codes.device, dtype=torch.float16)
        blocks_per_tile = 32
        codebook_dequant_kernel[(_vector_cores(),)](codes, absmax, self.codebook, out, absmax.numel() // blocks_per_tile,
                                                    QBLOCK=64, BLOCKS=blocks_per_tile)
        return out
