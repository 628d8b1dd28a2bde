"""2D max pooling: stride-1 windows by rolling row maxima, k loads per output instead of k * k.

The rules' best (1.30x over the initial version) walks each output's kernel x kernel window with one
program per block of the flattened output: k * k masked 4-byte loads and a division and modulo by
the output width and height per element. Its brief leaves the two stride-1 cases far from their
floors, 256 x 256 with a 4 x 4 window at 26% of the roofline and 192 x 192 with a dilated 3 x 3 at
36%, while the strided cases sit at 70-95%: with stride 1 every input row is read by k output rows
and every element by k * k windows, so the loads (16 per output for the 4 x 4 window), not DRAM,
bound the kernel. Max pooling is separable. Here, for stride 1:
- a program owns BLOCK_W output columns of ROWS consecutive output rows of one plane and walks the
  input rows they need once, top to bottom: each row's horizontal maximum over the k dilated
  columns (k loads), kept in registers for the SPAN = (k - 1) * dilation + 1 rows a window spans;
- each output row is the maximum of k of those kept row maxima (no load at all), so an input row is
  loaded k times (once per column offset) instead of k * k, and the index arithmetic is per program;
- rows and columns outside the input read as -inf, as nn.MaxPool2d pads;
- the sizes are not specialized on: a width divisible by 16 gave the loads another layout than the
  stores (the loads are 4-byte ones either way, their windows being unaligned), and a conversion
  through shared memory with two barriers per row (sm_90 IR of the 256 x 256 case).
Strided windows (stride > 1, the cases already at 70-95%) keep the rules' kernel; so do windows
spanning more than 8 rows, more than the registers kept here.

Round 2. Round 1 was this kernel and the judge refused it as wrong on the 4 x 4 stride-1 case (max
error 0.937 relative). Under the interpreter every config is exact, but the compiled TTIR shows why
the GPU differs: its row loop carries one tensor (`scf.for ... iter_args(%h1_21 = ...)`), not three.
Triton makes a variable loop-carried only when the body leaves it bound to another value than it
entered with; h1..h7 all entered bound to the one `neg` tensor, so in the body `h7 = h6` (and so
down to `h2 = h1`) looked unchanged and those rows stayed -inf: each output was the maximum of its
newest rows only. Each kept row now starts as a tensor of its own, and the loop carries SPAN - 1 of
them (three for the 4 x 4 window).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

MAX_SPAN = 8


@triton.jit
def _row_max(x_plane, ih, cols, H, W, KERNEL: tl.constexpr, PADDING: tl.constexpr, DILATION: tl.constexpr,
             BLOCK_W: tl.constexpr):
    """Maximum over one input row's KERNEL dilated columns for each output column (-inf off the input)."""
    row_ok = (ih >= 0) & (ih < H)
    best = tl.full((BLOCK_W,), float("-inf"), dtype=tl.float32)
    for kw in tl.static_range(KERNEL):
        iw = cols - PADDING + kw * DILATION
        value = tl.load(x_plane + ih * W + iw, mask=row_ok & (iw >= 0) & (iw < W), other=float("-inf"))
        best = tl.maximum(best, value)
    return best


@triton.jit
def _aged(age: tl.constexpr, h0, h1, h2, h3, h4, h5, h6, h7):
    """The row maximum read ``age`` rows ago (0: the newest)."""
    if age == 0:
        return h0
    elif age == 1:
        return h1
    elif age == 2:
        return h2
    elif age == 3:
        return h3
    elif age == 4:
        return h4
    elif age == 5:
        return h5
    elif age == 6:
        return h6
    else:
        return h7


@triton.autotune(
    configs=[triton.Config({"BLOCK_W": w, "ROWS": r}, num_warps=nw)
             for w, r, nw in [(128, 32, 4), (256, 32, 4), (256, 16, 4), (128, 64, 4), (256, 64, 8), (512, 32, 8)]],
    key=["H", "W", "OH", "OW"],
)
@triton.jit(do_not_specialize=["H", "W", "OH", "OW"])
def max_pool2d_rolling_kernel(
    x_ptr, y_ptr, H, W, OH, OW,
    KERNEL: tl.constexpr, PADDING: tl.constexpr, DILATION: tl.constexpr, SPAN: tl.constexpr,
    BLOCK_W: tl.constexpr, ROWS: tl.constexpr,
):
    pid = tl.program_id(0)
    row_chunks = tl.cdiv(OH, ROWS)
    plane = (pid // row_chunks).to(tl.int64)
    first_row = (pid % row_chunks) * ROWS
    cols = tl.program_id(1) * BLOCK_W + tl.arange(0, BLOCK_W)
    x_plane = x_ptr + plane * H * W
    y_plane = y_ptr + plane * OH * OW
    col_ok = cols < OW
    neg = tl.full((BLOCK_W,), float("-inf"), dtype=tl.float32)
    # seven separate values: Triton carries a variable through the loop only when the body leaves it
    # holding another value than it entered with, so seven names bound to one -inf tensor would see
    # h7 = h6 as "unchanged" and keep -inf in every row but the newest (round 1's wrong results)
    h1 = tl.full((BLOCK_W,), float("-inf"), dtype=tl.float32)
    h2 = tl.full((BLOCK_W,), float("-inf"), dtype=tl.float32)
    h3 = tl.full((BLOCK_W,), float("-inf"), dtype=tl.float32)
    h4 = tl.full((BLOCK_W,), float("-inf"), dtype=tl.float32)
    h5 = tl.full((BLOCK_W,), float("-inf"), dtype=tl.float32)
    h6 = tl.full((BLOCK_W,), float("-inf"), dtype=tl.float32)
    h7 = tl.full((BLOCK_W,), float("-inf"), dtype=tl.float32)
    top = first_row - PADDING  # the input row of the first window's top
    for t in range(ROWS + SPAN - 1):
        h0 = _row_max(x_plane, top + t, cols, H, W, KERNEL, PADDING, DILATION, BLOCK_W)
        out = neg
        for kh in tl.static_range(KERNEL):
            out = tl.maximum(out, _aged(SPAN - 1 - kh * DILATION, h0, h1, h2, h3, h4, h5, h6, h7))
        oh = first_row + t - (SPAN - 1)
        tl.store(y_plane + oh * OW + cols, out, mask=col_ok & (t >= SPAN - 1) & (oh < OH))
        h7, h6, h5, h4, h3, h2, h1 = h6, h5, h4, h3, h2, h1, h0


@triton.autotune(
    configs=[triton.Config({"BLOCK_SIZE": b}, num_warps=w, num_stages=3)
             for b, w in [(1024, 4), (512, 4), (512, 8), (1024, 8), (2048, 4), (2048, 8), (4096, 4), (4096, 8)]],
    key=["n_out", "H", "W", "OH", "OW"],
)
@triton.jit
def max_pool2d_kernel(
    x_ptr, y_ptr, n_out, H, W, OH, OW,
    KERNEL: tl.constexpr, STRIDE: tl.constexpr, PADDING: tl.constexpr, DILATION: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    """The rules' kernel, for strided windows: one program per block of the flattened output."""
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_out
    ow = offs % OW
    oh = (offs // OW) % OH
    plane = offs // (OW * OH)
    x_plane = x_ptr + plane * H * W
    result = tl.full((BLOCK_SIZE,), float("-inf"), dtype=tl.float32)
    for kh in tl.static_range(KERNEL):
        ih = oh * STRIDE - PADDING + kh * DILATION
        for kw in tl.static_range(KERNEL):
            iw = ow * STRIDE - PADDING + kw * DILATION
            valid = mask & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
            x = tl.load(x_plane + ih * W + iw, mask=valid, other=float("-inf"))
            result = tl.maximum(result, x)
    tl.store(y_ptr + offs, result, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, kernel_size: int, stride: int, padding: int, dilation: int):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        N, C, H, W = x.shape
        k, s, p, d = self.kernel_size, self.stride, self.padding, self.dilation
        OH = (H + 2 * p - d * (k - 1) - 1) // s + 1
        OW = (W + 2 * p - d * (k - 1) - 1) // s + 1
        y = torch.empty((N, C, OH, OW), device=x.device, dtype=x.dtype)
        span = (k - 1) * d + 1
        if s == 1 and span <= MAX_SPAN:
            def grid(meta):
                return (N * C * triton.cdiv(OH, meta["ROWS"]), triton.cdiv(OW, meta["BLOCK_W"]))

            max_pool2d_rolling_kernel[grid](x, y, H, W, OH, OW, KERNEL=k, PADDING=p, DILATION=d, SPAN=span)
        else:
            n_out = y.numel()
            max_pool2d_kernel[lambda meta: (triton.cdiv(n_out, meta["BLOCK_SIZE"]),)](
                x, y, n_out, H, W, OH, OW, KERNEL=k, STRIDE=s, PADDING=p, DILATION=d)
        return y
