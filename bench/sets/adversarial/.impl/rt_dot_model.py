"""The whole model, in a dot-prefixed folder beside the solution. Sentinel.is_candidate_file excludes
paths under the solution's folder that start with "." (folder + "."), so none of these frames is the
candidate's: the audit hook's refusals (frames, writes, exec, gc, ctypes...) all ask acting_for_candidate,
which walks up to the runner's frames and answers no. Shown twice: __init__ writes a file outside the
write roots, and forward (an honest kernel) takes frames and moves the timed call's start event so the
events claim ~half the real time (inside the host-clock bound)."""
import os
import sys
import tempfile
import time

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


def _shorten_timed_call(now):
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "go":
            start = frame.f_locals.get("start")
            if start is not None and hasattr(start, "at"):
                start.at = now - 0.55 * (now - start.at) + 0.0002
            return
        frame = frame.f_back


class ModelNew(nn.Module):
    def __init__(self, alpha: float):
        super().__init__()
        self.alpha = alpha
        with open(os.path.join(tempfile.gettempdir(), "written_by_dotdir_model.txt"), "a") as handle:
            handle.write(f"written from the contestant, pid {__import__('os').getpid()}\n")

    def forward(self, x, y):
        out = torch.empty_like(x)
        n = x.numel()
        add_kernel[(triton.cdiv(n, 1024),)](x, y, out, self.alpha, n, BLOCK=1024)
        _shorten_timed_call(time.perf_counter())
        return out
