import torch
import torch.nn as nn
import torch_npu  # noqa: F401
import triton
import triton.language as tl


@triton.jit
def _masked_nll_kernel(logp_ptr, labels_ptr, out_ptr, n, ignore_index, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    logp = tl.load(logp_ptr + offs, mask=mask, other=0.0)
    labels = tl.load(labels_ptr + offs, mask=mask, other=ignore_index)
    loss = tl.where(labels != ignore_index, -logp, 0.0)
    tl.store(out_ptr + offs, loss, mask=mask)


class ModelNew(nn.Module):
    def forward(self, target_logp, labels):
        n = target_logp.numel()
        out = torch.empty_like(target_logp)
        _masked_nll_kernel[(triton.cdiv(n, 1024),)](target_logp, labels, out, n, -100, BLOCK=1024)
        return out
