"""A plain script that launches a Triton kernel (no ModelNew): `ladder diagnose` captures it as it runs."""
import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, factor, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * factor, mask=mask)


def main():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    x = torch.randn(5000, device=device)
    out = torch.empty_like(x)
    scale_kernel[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), 2.0, BLOCK=256)


if __name__ == "__main__":
    main()
