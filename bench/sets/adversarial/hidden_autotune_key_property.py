"""another unwrapped entry into candidate code 'inside Triton': triton.autotune's Autotuner.run
reads `arg.dtype` of every argument to build its key. A non-tensor argument whose `dtype` is a
property runs torch.add (passed as a value, launched through contextlib.ExitStack) there."""
import contextlib
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 32})], key=["n"])
@triton.jit
def touch_kernel(out_ptr, n, job, BLOCK: tl.constexpr):
    pid = tl.program_id(0)


class Job:
    def __init__(self, fn, args, kwargs):
        self.fn, self.args, self.kwargs = fn, args, kwargs

    @property
    def dtype(self):
        with contextlib.ExitStack() as stack:
            stack.callback(self.fn, *self.args, **self.kwargs)
        return "job"

    def __repr__(self):
        return "job"


class ModelNew(nn.Module):
    def __init__(self, alpha: float):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        out = torch.empty_like(x)
        job = Job(torch.add, (x, y), {"alpha": self.alpha, "out": out})
        touch_kernel[(1,)](out, x.numel(), job)
        return out
