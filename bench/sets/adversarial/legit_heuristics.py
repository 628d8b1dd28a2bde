"""Block size and a divisibility flag from @triton.heuristics (plain Python on the arguments)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.heuristics({"BLOCK": lambda args: 1024 if args["n"] >= 1024 else 256,
                    "EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def heuristic_kernel(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets) + alpha * tl.load(y_ptr + offsets))
    else:
        mask = offsets < n
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + alpha * tl.load(y_ptr + offsets, mask=mask),
                 mask=mask)


class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        out = torch.empty_like(x)
        n = x.numel()
        heuristic_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, out, self.alpha, n)
        return out
