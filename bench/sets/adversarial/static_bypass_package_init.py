"""Static-rule bypass: `import rtpkg.kernels` makes the checker read rtpkg/kernels.py only; Python also runs
rtpkg/__init__.py, which is never checked. The trick hidden there is hidden_numpy_raw_pointer.py's (numpy on
raw pointers: no torch call, caught by the static rules alone), reached as an attribute of the package."""
import torch
import torch.nn as nn

import rtpkg.kernels


class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        out = torch.empty_like(x)
        rtpkg.host_add(out, x, y, self.alpha)
        rtpkg.kernels.touch_kernel[(1,)](out, 0, BLOCK=16)
        return out
