"""as tamper_closure_tally.py, but the path to the contestant starts at the wrapper on
JITFunction.run (not a banned torch-internals name) and every internal attribute name is built at
run time in module-level code (not the hot path): JITFunction.run.__closure__ -> tracer ->
tracer.called_by_candidate.__self__ (the Sentinel) -> sentinel.recording.__closure__ -> Contestant.
forward computes with operators and empties the contestant's tally of torch calls at the end."""
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
TALLY = OWNER.compute_calls if OWNER is not None else {}


@triton.jit
def touch_kernel(out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)


class ModelNew(nn.Module):
    def __init__(self, alpha: float):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        out = x + self.alpha * y
        touch_kernel[(1,)](out, out.numel(), BLOCK=16)
        TALLY.clear()
        return out
