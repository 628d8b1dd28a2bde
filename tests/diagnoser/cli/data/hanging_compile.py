"""A kernel whose compile never ends: a static_range of a billion iterations is unrolled by
Triton's code generator one iteration at a time."""
import torch
import triton
import triton.language as tl


@triton.jit
def unrolled_forever(x_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.load(x_ptr + offsets, mask=offsets < n)
    for _ in tl.static_range(1_000_000_000):
        acc = acc + 1.0
    tl.store(x_ptr + offsets, acc, mask=offsets < n)


def main():
    x = torch.zeros(256)
    unrolled_forever[(1,)](x, x.numel(), BLOCK=256)


if __name__ == "__main__":
    main()
