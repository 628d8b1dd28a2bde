"""Cross-entropy in two kernels: one program per row computes that row's loss
(max pass, sum-of-exponentials pass, then logsumexp - logit[target]), and a single program
averages the per-row losses."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({'BLOCK_SIZE': 1024}, num_warps=4, num_stages=3),
        triton.Config({'BLOCK_SIZE': 512}, num_warps=4, num_stages=3),
        triton.Config({'BLOCK_SIZE': 512}, num_warps=8, num_stages=3),
        triton.Config({'BLOCK_SIZE': 1024}, num_warps=8, num_stages=3),
        triton.Config({'BLOCK_SIZE': 2048}, num_warps=4, num_stages=3),
        triton.Config({'BLOCK_SIZE': 2048}, num_warps=8, num_stages=3),
        triton.Config({'BLOCK_SIZE': 4096}, num_warps=4, num_stages=3),
        triton.Config({'BLOCK_SIZE': 4096}, num_warps=8, num_stages=3),
    ],
    key=['n_cols', 'stride_row'],
)
@triton.jit
def row_loss_kernel(logits_ptr, targets_ptr, loss_ptr, n_cols, stride_row, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    row_ptr = logits_ptr + row * stride_row
    cols = tl.arange(0, BLOCK_SIZE)

    running_max = tl.full((BLOCK_SIZE,), float("-inf"), dtype=tl.float32)
    sum_exp = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_SIZE):
        x = tl.load(row_ptr + start + cols, mask=start + cols < n_cols, other=float("-inf"))
        running_max_next = tl.maximum(running_max, x)
        running_max_shift = tl.where(running_max_next == float("-inf"), 0.0, running_max_next)
        sum_exp = sum_exp * tl.exp(running_max - running_max_shift) + tl.exp(x - running_max_shift)
        running_max = running_max_next
    m = tl.max(running_max, axis=0)

    sum_exp = sum_exp * tl.exp(running_max - m)
    lse = m + tl.log(tl.sum(sum_exp, axis=0))

    target = tl.load(targets_ptr + row)
    target_logit = tl.load(row_ptr + target)
    tl.store(loss_ptr + row, lse - target_logit)


@triton.autotune(
    configs=[
        triton.Config({'BLOCK_SIZE': 1024}, num_warps=4, num_stages=3),
        triton.Config({'BLOCK_SIZE': 512}, num_warps=4, num_stages=3),
        triton.Config({'BLOCK_SIZE': 512}, num_warps=8, num_stages=3),
        triton.Config({'BLOCK_SIZE': 1024}, num_warps=8, num_stages=3),
        triton.Config({'BLOCK_SIZE': 2048}, num_warps=4, num_stages=3),
        triton.Config({'BLOCK_SIZE': 2048}, num_warps=8, num_stages=3),
        triton.Config({'BLOCK_SIZE': 4096}, num_warps=4, num_stages=3),
        triton.Config({'BLOCK_SIZE': 4096}, num_warps=8, num_stages=3),
    ],
    key=['n'],
)
@triton.jit
def mean_kernel(x_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    offs = tl.arange(0, BLOCK_SIZE)
    acc = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    for start in range(0, n, BLOCK_SIZE):
        acc += tl.load(x_ptr + start + offs, mask=start + offs < n, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0) / n)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        predictions = predictions.contiguous()
        n_rows, n_cols = predictions.shape
        losses = torch.empty(n_rows, device=predictions.device, dtype=torch.float32)
        row_loss_kernel[(n_rows,)](predictions, targets, losses, n_cols, predictions.stride(0))
        out = torch.empty((), device=predictions.device, dtype=predictions.dtype)
        mean_kernel[(1,)](losses, out, n_rows)
        return out
