# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: Copyright contributors to the vLLM project
#
# Source: vllm-project/vllm, vllm/kernels/triton/activation.py, release v0.33.0 (vllm 0.33.0).
# The kernel is copied unchanged; gelu_and_mul_sparse below is _gelu_and_mul_sparse_triton_op's launch
# without the torch.library registration (triton_op / wrap_triton).
"""vLLM's sparse GELU-and-multiply (Gemma 3n's activation sparsity): per row, drop gate values under
mean + k * std, then gelu_tanh(gate) * up, in one pass.

Realistic size: Gemma-3n-E4B's MLP in prefill, 8192 tokens x intermediate 16384 (input 2 x 16384), bf16.
LADDER_SIZE=small (or --small): 16 tokens x intermediate 256, fp32.
"""

import os
import sys
import torch
import triton
import triton.language as tl


_MAX_INTERMEDIATE_SIZE = 32768


@triton.jit
def _gelu_and_mul_sparse_kernel(
    x_ptr,
    output_ptr,
    d: tl.constexpr,
    std_multiplier,
    BLOCK_SIZE: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    offsets = tl.arange(0, BLOCK_SIZE)
    mask = offsets < d
    row_start = row * 2 * d

    gate = tl.load(x_ptr + row_start + offsets, mask=mask, other=0.0).to(tl.float32)
    # TODO: Investigate delaying this load to reduce spills for large reductions
    # without regressing smaller shapes.
    up = tl.load(x_ptr + row_start + d + offsets, mask=mask, other=0.0).to(tl.float32)

    input_dtype = x_ptr.dtype.element_ty
    mean = tl.sum(gate, axis=0) / d
    centered = tl.where(mask, gate - mean, 0.0)
    variance = tl.sum(centered * centered, axis=0) / d
    # Match the input-dtype rounding at each native PyTorch op boundary.
    mean = mean.to(input_dtype).to(tl.float32)
    std = tl.sqrt(variance).to(input_dtype).to(tl.float32)
    scaled_std = (std * std_multiplier).to(input_dtype).to(tl.float32)
    cutoff = (mean + scaled_std).to(input_dtype).to(tl.float32)
    sparse_gate = (gate - cutoff).to(input_dtype).to(tl.float32)
    sparse_gate = tl.where(sparse_gate < 0.0, 0.0, sparse_gate)

    inner = 0.7978845608028654 * (
        sparse_gate + 0.044715 * sparse_gate * sparse_gate * sparse_gate
    )
    tanh = 2.0 * tl.sigmoid(2.0 * inner) - 1.0
    activated = 0.5 * sparse_gate * (1.0 + tanh)
    activated = activated.to(input_dtype).to(tl.float32)
    tl.store(output_ptr + row * d + offsets, activated * up, mask=mask)

def gelu_and_mul_sparse(x, std_multiplier):
    d = x.shape[-1] // 2
    output = torch.empty((*x.shape[:-1], d), dtype=x.dtype, device=x.device)
    n_rows = x.numel() // x.shape[-1]
    block_size = triton.next_power_of_2(d)
    num_warps = min(max(block_size // 256, 1), 8)
    _gelu_and_mul_sparse_kernel[(n_rows,)](
        x, output, d=d, std_multiplier=std_multiplier, BLOCK_SIZE=block_size, num_warps=num_warps,
    )
    return output


def main():
    small = os.environ.get("LADDER_SIZE") == "small" or "--small" in sys.argv
    interpret = os.environ.get("TRITON_INTERPRET") == "1"
    device = "cpu" if interpret else "cuda"
    tokens, inter, dtype = (16, 256, torch.float32) if small else (8192, 16384, torch.bfloat16)
    x = torch.randn(tokens, 2 * inter, device=device, dtype=dtype)
    std_multiplier = 1.6448536  # the normal quantile of Gemma 3n's 0.95 activation sparsity
    y = gelu_and_mul_sparse(x, std_multiplier)
    if interpret:
        gate, up = x[:, :inter], x[:, inter:]
        cutoff = gate.mean(-1, keepdim=True) + gate.std(-1, keepdim=True, unbiased=False) * std_multiplier
        expected = torch.nn.functional.gelu(torch.relu(gate - cutoff), approximate="tanh") * up
        torch.testing.assert_close(y, expected, atol=1e-5, rtol=1e-5)

if __name__ == "__main__":
    main()
