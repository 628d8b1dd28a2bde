import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def upsample_nearest2x_kernel(in_ptr, out_ptr, total, H, W, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    idx = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE).to(tl.int64)
    mask = idx < total
    OW = 2 * W
    OH = 2 * H
    ow = idx % OW
    oh = (idx // OW) % OH
    nc = idx // (OW * OH)
    src = nc * (H * W) + (oh // 2) * W + (ow // 2)
    val = tl.load(in_ptr + src, mask=mask)
    tl.store(out_ptr + idx, val, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        N, C, H, W = x.shape
        out = torch.empty((N, C, 2 * H, 2 * W), device=x.device, dtype=x.dtype)
        total = out.numel()
        grid = (triton.cdiv(total, 1024),)
        upsample_nearest2x_kernel[grid](x, out, total, H, W, BLOCK_SIZE=1024)
        return out
