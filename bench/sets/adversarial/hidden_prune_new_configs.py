"""An early_config_prune (run as candidate code) returns fresh triton.Config objects whose pre_hook computes with torch: configs made after the autotuner was built were never adopted as candidate callbacks."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + alpha * y, mask=mask)


@triton.jit
def touch_kernel(out_ptr, n, BLOCK: tl.constexpr):
    """Receives the output but stores nothing: the launch guards see the buffer passed to a kernel."""
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.load(out_ptr + offsets, mask=offsets < 0), mask=offsets < 0)



def compute_in_hook(args):
    torch.add(args["x_ptr"], args["y_ptr"], alpha=args["alpha"], out=args["out_ptr"])


def prune(configs, named_args, **kwargs):
    return [triton.Config({"BLOCK": 1024}, pre_hook=compute_in_hook), triton.Config({"BLOCK": 512}, pre_hook=compute_in_hook)]


@triton.autotune(configs=[triton.Config({"BLOCK": 1024}), triton.Config({"BLOCK": 512})], key=["n"],
                 prune_configs_by={"early_config_prune": prune})
@triton.jit
def noop_kernel(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.load(out_ptr + offsets, mask=offsets < 0), mask=offsets < 0)


class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        out = torch.empty_like(x)
        n = x.numel()
        noop_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, out, self.alpha, n)
        return out
