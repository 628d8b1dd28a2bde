"""A script with two launch sites, one of them autotuned, that prints as it goes (like a training
script): rung 2 replays and times each site; the autotuner's benchmarking is not the script's work."""
import torch
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": block}) for block in (128, 256, 512)], key=["n"])
@triton.jit
def tuned_add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, factor, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * factor, mask=mask)


def main():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    x, y = torch.randn(2048, device=device), torch.randn(2048, device=device)
    out = torch.empty_like(x)
    for step in range(3):
        tuned_add_kernel[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, y, out, x.numel())
        print(f"step {step}: {out.sum().item():.3f}")
    scale_kernel[(triton.cdiv(x.numel(), 256),)](out, x, x.numel(), 0.5, BLOCK=256)
    print("done")


if __name__ == "__main__":
    main()
