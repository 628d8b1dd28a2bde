import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * 2.0, mask=mask)


x = torch.randn(5000)
out = torch.empty_like(x)
scale_kernel[(1,)](x, out, x.numel(), BLOCK=300)  # not a power of two: the launch fails
