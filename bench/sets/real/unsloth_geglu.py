# Copyright 2023-present Daniel Han-Chen & the Unsloth team. All rights reserved.
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#     http://www.apache.org/licenses/LICENSE-2.0
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
#
# Source: unslothai/unsloth, unsloth/kernels/geglu.py, release 2026.10.9 (unsloth 2026.10.9).
# The exact-GELU kernels and their launch functions copied unchanged; torch_gpu_device stands in for
# unsloth/kernels/utils.py's.
"""Unsloth GEGLU with the exact (erf) GELU: forward and the fused in-place backward.

Realistic size: Gemma-7B's MLP in a fine-tune, batch 4 x seq 2048 x intermediate 24576, bf16.
LADDER_SIZE=small (or --small): 1 x 16 x 256, fp32.
"""
import os
import sys
from contextlib import nullcontext

import torch
import triton
import triton.language as tl

# signed int32 max is 2**31-1, so num_elements cannot exceed 2**31.
NUM_INT32_ELEMENTS = 2**31
SAFE_INT32_BUFFER_MULTIPLIER = 4
BLOCK_SIZE = 1024
INT32_SAFETY_BUFFER = NUM_INT32_ELEMENTS - BLOCK_SIZE * SAFE_INT32_BUFFER_MULTIPLIER


def torch_gpu_device(device):
    """unsloth/kernels/utils.py: the device context on a CUDA tensor, none elsewhere."""
    return torch.cuda.device(device) if device.type == "cuda" else nullcontext()


@triton.jit
def _exact_forward_kernel(
    e, g, h, n_elements, BLOCK_SIZE: tl.constexpr, LONG_INDEXING: tl.constexpr
):
    block_idx = tl.program_id(0)
    if LONG_INDEXING:
        offsets = block_idx.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE).to(tl.int64)
        n_elements = tl.cast(n_elements, tl.int64)
    else:
        offsets = block_idx * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements

    # f = 1/2 * e * (1 + erf(1/sqrt(2) * e)), h = f * up.
    e_row = tl.load(e + offsets, mask = mask, other = 0).to(tl.float32)
    g_row = tl.load(g + offsets, mask = mask, other = 0)

    f_row = 0.5 * e_row * (tl.math.erf(tl.math.rsqrt(2.0) * e_row) + 1.0)
    f_row = f_row.to(g_row.dtype)  # Exact copy from HF
    h_row = f_row * g_row

    tl.store(h + offsets, h_row, mask = mask)


def geglu_exact_forward_kernel(gate, up):
    batch, seq_len, hd = gate.shape
    n_elements = gate.numel()
    device = gate.device
    out = torch.empty((batch, seq_len, hd), dtype = gate.dtype, device = device)
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)
    with torch_gpu_device(device):
        _exact_forward_kernel[grid](
            gate,
            up,
            out,
            n_elements,
            BLOCK_SIZE = BLOCK_SIZE,
            LONG_INDEXING = 0 if n_elements <= INT32_SAFETY_BUFFER else 1,
            enable_fp_fusion = True,
        )
    return out


@triton.jit
def _exact_backward_kernel(
    DW, e, g, n_elements, BLOCK_SIZE: tl.constexpr, LONG_INDEXING: tl.constexpr
):
    """
    f = 1/2 * e * (1 + erf(1/sqrt(2) * e))
    h = f * up

    df/de (with help of Wolfram :)
    df/de = 1/2 * (1 + erf(1/sqrt(2) * e)) + 1/sqrt(2*pi) * e * exp(-1/2 * e^2)

    Reuse via
    f =        1/2 * (1 + erf(1/sqrt(2) * e)) * e
    """
    block_idx = tl.program_id(0)
    if LONG_INDEXING:
        offsets = block_idx.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE).to(tl.int64)
        n_elements = tl.cast(n_elements, tl.int64)
    else:
        offsets = block_idx * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements

    DW_row = tl.load(DW + offsets, mask = mask, other = 0)
    e_row = tl.load(e + offsets, mask = mask, other = 0).to(tl.float32)
    g_row = tl.load(g + offsets, mask = mask, other = 0)

    # Break e_row away for reuse f = 1/2 * e * (1 + erf(1/sqrt(2) * e))
    f_partial_row = 0.5 * (tl.math.erf(tl.math.rsqrt(2.0) * e_row) + 1.0)
    f_row = f_partial_row * e_row

    f_row = f_row.to(DW_row.dtype)
    # h = f * g
    h_row = f_row * g_row
    # df = DW * f
    df_row = DW_row * f_row
    # dg = DW * g
    dg_row = DW_row * g_row

    # df/de = 1/2 * (1 + erf(1/sqrt(2) * e)) + 1/sqrt(2*pi) * e * exp(-1/2 * e^2).
    t = 0.3989422804014327
    df_de = f_partial_row + t * e_row * tl.exp(-0.5 * e_row * e_row)

    de_row = dg_row.to(tl.float32) * df_de
    de_row = de_row.to(DW_row.dtype)

    tl.store(DW + offsets, h_row, mask = mask)
    tl.store(e + offsets, df_row, mask = mask)
    tl.store(g + offsets, de_row, mask = mask)


def geglu_exact_backward_kernel(DW, e, g):
    batch_seq_len, hd = e.shape
    n_elements = e.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)
    with torch_gpu_device(e.device):
        _exact_backward_kernel[grid](
            DW,
            e,
            g,
            n_elements,
            BLOCK_SIZE = BLOCK_SIZE,
            LONG_INDEXING = 0 if n_elements <= INT32_SAFETY_BUFFER else 1,
            enable_fp_fusion = True,
        )
    return DW, e, g


def main():
    small = os.environ.get("LADDER_SIZE") == "small" or "--small" in sys.argv
    interpret = os.environ.get("TRITON_INTERPRET") == "1"
    device = "cpu" if interpret else "cuda"
    batch, seq, inter, dtype = (1, 16, 256, torch.float32) if small else (4, 2048, 24576, torch.bfloat16)
    gate = torch.randn(batch, seq, inter, device=device, dtype=dtype)
    up = torch.randn(batch, seq, inter, device=device, dtype=dtype)
    dw = torch.randn(batch * seq, inter, device=device, dtype=dtype)
    out = geglu_exact_forward_kernel(gate, up)
    gate_ref, up_ref, dw_ref = gate.clone(), up.clone(), dw.clone()
    h, df, de = geglu_exact_backward_kernel(dw, gate.view(-1, inter), up.view(-1, inter))
    if interpret:
        er, gr = gate_ref.view(-1, inter).requires_grad_(True), up_ref.view(-1, inter).requires_grad_(True)
        f = torch.nn.functional.gelu(er)
        (f * gr).backward(dw_ref)
        torch.testing.assert_close(out.view(-1, inter), (f * gr).detach(), atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(de, er.grad, atol=1e-4, rtol=1e-4)


if __name__ == "__main__":
    main()
