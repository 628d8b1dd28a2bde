"""A script that talks on standard output while it launches a Triton kernel: its prints (Python's
and a raw write to descriptor 1) must never reach ladder's own output."""
import os

import torch
import triton
import triton.language as tl

print("the script's own print at import")
os.write(1, b"a raw write to descriptor 1\n")


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, factor, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * factor, mask=mask)


def main():
    # On the device where there is one: Triton cannot read host tensors outside its interpreter.
    x = torch.randn(5000, device="cuda" if torch.cuda.is_available() else "cpu")
    out = torch.empty_like(x)
    print("launching {")
    scale_kernel[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), 2.0, BLOCK=256)
    print("} launched")


if __name__ == "__main__":
    main()
