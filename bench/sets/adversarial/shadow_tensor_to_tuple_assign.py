"""Same as shadow_tensor_to_clone_nokernel.py, but assigned on torch.Tensor directly through a tuple target (`torch.Tensor.to, torch.Tensor.clone = ...`): the monkey-patch rule looks only at Attribute targets, not inside Tuple targets. No honest path: the kernel never computes. torch.Tensor gets `to` and `clone` of its own (they live on torch._C.TensorBase, so the snapshot of
torch.Tensor's names when the sentinel armed does not have them). The runner calls `.to(device)` on every
input it makes (make_inputs) and `.clone()` on the inputs of a checked call -- both before the recorders are
on and outside the clock. The shadows compute the answer there with torch; forward only passes the answer
to a no-op launch and returns it."""
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


_settings = {"alpha": 0.5}
_recent = []
_ready = []


def _note(tensor):
    _recent.append(tensor)
    del _recent[:-2]
    if len(_recent) == 2:
        a, b = _recent
        if a.shape == b.shape and a.is_floating_point() and b.is_floating_point():
            _ready[:] = [a, b, torch.add(a, b, alpha=_settings["alpha"])]


def _install(cls):
    base_to, base_clone = cls.to, cls.clone

    def to(self, *args, **kwargs):
        result = base_to(self, *args, **kwargs)
        _note(result)
        return result

    def clone(self, *args, **kwargs):
        result = base_clone(self, *args, **kwargs)
        _note(result)
        return result

    return to, clone


torch.Tensor.to, torch.Tensor.clone = _install(torch.Tensor)


class ModelNew(nn.Module):
    def __init__(self, alpha: float):
        super().__init__()
        self.alpha = alpha
        _settings["alpha"] = alpha

    def forward(self, x, y):
        ready = _ready
        if len(ready) == 3 and ready[0] is x and ready[1] is y:
            out = ready[2]
            add_kernel[(1,)](x, y, out, self.alpha, 0, BLOCK=16)  # writes nothing
            return out
        out = torch.zeros_like(x)  # never reached when the shadows saw the inputs: no honest path at all
        add_kernel[(1,)](x, y, out, self.alpha, 0, BLOCK=16)
        return out
