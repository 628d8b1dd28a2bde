"""an honest kernel, but forward reaches the contestant (closure walk with
computed names at import, as tamper_tracer_tally_alias.py) and, during a timed call, moves the timed call's start event
forward, so the event time it reports is about half the real one; the host-clock bound allows
2x + 0.5 ms."""
import time
import torch
import torch.nn as nn
import triton
import triton.language as tl
from triton.runtime.jit import JITFunction
from triton.runtime.interpreter import InterpretedFunction

_get = getattr
_CLOSURE = "__clo" + "sure__"
_CONTENTS = "cell_con" + "tents"
_SELF = "__se" + "lf__"


def _find_contestant():
    for owner in (JITFunction, InterpretedFunction):
        for cell in _get(owner.run, _CLOSURE, None) or ():
            tracer = _get(cell, _CONTENTS)
            sentinel = _get(_get(tracer, "called_by_candidate", None), _SELF, None)
            for inner in _get(_get(sentinel, "recording", None), _CLOSURE, None) or ():
                value = _get(inner, _CONTENTS)
                if hasattr(value, "compute_calls"):
                    return value
    return None


OWNER = _find_contestant()


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + alpha * y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, alpha: float):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        out = torch.empty_like(x)
        n = x.numel()
        add_kernel[(triton.cdiv(n, 1024),)](x, y, out, self.alpha, n, BLOCK=1024)
        timed = getattr(OWNER, "_timed", None) or {}
        events = timed.get("events")
        if events is not None and not timed.get("done") and hasattr(events[0], "at"):
            now = time.perf_counter()
            events[0].at = now - 0.55 * (now - events[0].at) + 0.0002
        return out
