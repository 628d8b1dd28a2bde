import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def log_softmax_fwd(logits_ptr, out_ptr, stride_row, V, BLOCK_V: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_V)
    mask = offs < V
    x = tl.load(logits_ptr + row * stride_row + offs, mask=mask, other=float("-inf")).to(tl.float32)
    m = tl.max(x, axis=0)
    shifted = x - m
    lse = tl.log(tl.sum(tl.exp(shifted), axis=0))
    tl.store(out_ptr + row * stride_row + offs, (shifted - lse).to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor) -> torch.Tensor:
        logits = logits.contiguous()
        n_rows, V = logits.shape
        out = torch.empty_like(logits)
        log_softmax_fwd[(n_rows,)](logits, out, logits.stride(0), V, BLOCK_V=triton.next_power_of_2(V), num_warps=8)
        return out
