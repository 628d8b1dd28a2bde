import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_C": 1024}, num_warps=4),
        triton.Config({"BLOCK_C": 2048}, num_warps=8),
        triton.Config({"BLOCK_C": 4096}, num_warps=8),
    ],
    key=["n_cols"],
)
@triton.jit
def _bias_act_res(x_ptr, b_ptr, s_ptr, out_ptr, n_cols, row_stride, slope, BLOCK_C: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    cols = tl.max_contiguous(tl.multiple_of(cols, BLOCK_C), BLOCK_C)
    in_row = cols < n_cols
    base = row * row_stride
    x = tl.load(x_ptr + base + cols, mask=in_row).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=in_row).to(tl.float32)
    s = tl.load(s_ptr + base + cols, mask=in_row).to(tl.float32)
    h = x + b
    h = tl.where(h > 0, h, h * slope)
    tl.store(out_ptr + base + cols, (h + s).to(out_ptr.dtype.element_ty), mask=in_row)


class ModelNew(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(channels, dtype=torch.float16))

    def forward(self, x, skip):
        rows, cols = x.shape
        out = torch.empty_like(x)
        grid = lambda meta: (rows, triton.cdiv(cols, meta["BLOCK_C"]))
        _bias_act_res[grid](x, self.bias, skip, out, cols, x.stride(0), 0.01)
        return out
