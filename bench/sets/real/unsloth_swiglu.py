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
# Source: unslothai/unsloth, unsloth/kernels/swiglu.py, release 2026.10.9 (unsloth 2026.10.9).
# Kernels and launch functions copied unchanged (the torch.compile-traced branch of the backward is left
# out); torch_gpu_device stands in for unsloth/kernels/utils.py's.
"""Unsloth SwiGLU: the forward h = silu(e) * g and the fused backward that overwrites e, g in place.

Realistic size: Llama-3-8B's MLP in a fine-tune, batch 4 x seq 2048 x intermediate 14336, bf16.
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
def _fg_kernel(e, g, h, n_elements, BLOCK_SIZE: tl.constexpr, LONG_INDEXING: tl.constexpr):
    block_idx = tl.program_id(0)
    if LONG_INDEXING:
        offsets = block_idx.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE).to(tl.int64)
        n_elements = tl.cast(n_elements, tl.int64)
    else:
        offsets = block_idx * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements

    e_row = tl.load(e + offsets, mask = mask, other = 0).to(tl.float32)
    g_row = tl.load(g + offsets, mask = mask, other = 0)

    # f = e * sigmoid(e), h = f * g.
    f_row = e_row * tl.sigmoid(e_row)
    f_row = f_row.to(g_row.dtype)  # Exact copy from HF
    # h = f * g
    h_row = f_row * g_row

    tl.store(h + offsets, h_row, mask = mask)


def swiglu_fg_kernel(e, g):
    batch, seq_len, hd = e.shape
    n_elements = e.numel()
    h = torch.empty((batch, seq_len, hd), dtype = e.dtype, device = e.device)
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)
    with torch_gpu_device(e.device):
        _fg_kernel[grid](
            e,
            g,
            h,
            n_elements,
            BLOCK_SIZE = BLOCK_SIZE,
            LONG_INDEXING = 0 if n_elements <= INT32_SAFETY_BUFFER else 1,
            enable_fp_fusion = True,
        )
    return h


@triton.jit
def _DWf_DW_dfg_kernel(DW, e, g, n_elements, BLOCK_SIZE: tl.constexpr, LONG_INDEXING: tl.constexpr):
    """
    e = e.float()
    se = 1.0 / (1.0 + torch.exp(-e))
    f = (se * e).to(dtype)
    h = f * g
    df = DW * f
    dg = DW * g
    de = (dg.float() * se * (1.0 + e * (1.0 - se))).to(dtype)
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

    # se = sigmoid(e), f = se * e, df = DW * f, dg = DW * g, de = dg * se * (1 + e * (1 - se)).
    se_row = tl.sigmoid(e_row)
    # f = (se * e).to(dtype)
    f_row = se_row * e_row
    f_row = f_row.to(DW_row.dtype)
    # h = f * g
    h_row = f_row * g_row
    # df = DW * f
    df_row = DW_row * f_row
    # dg = DW * g
    dg_row = DW_row * g_row
    # de = (dg.float() * se * (1.0 + e * (1.0 - se))).to(dtype)
    de_row = dg_row.to(tl.float32) * se_row * (1.0 + e_row * (1.0 - se_row))
    de_row = de_row.to(DW_row.dtype)

    tl.store(DW + offsets, h_row, mask = mask)
    tl.store(e + offsets, df_row, mask = mask)
    tl.store(g + offsets, de_row, mask = mask)


def swiglu_DWf_DW_dfg_kernel(DW, e, g):
    batch_seq_len, hd = e.shape  # Flattened to 2D, so 1st dim is bsz * seq_len
    n_elements = e.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)
    with torch_gpu_device(e.device):
        _DWf_DW_dfg_kernel[grid](
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
    batch, seq, inter, dtype = (1, 16, 256, torch.float32) if small else (4, 2048, 14336, torch.bfloat16)
    e = torch.randn(batch, seq, inter, device=device, dtype=dtype)
    g = torch.randn(batch, seq, inter, device=device, dtype=dtype)
    dw = torch.randn(batch * seq, inter, device=device, dtype=dtype)
    h = swiglu_fg_kernel(e, g)
    e_ref, g_ref, dw_ref = e.clone(), g.clone(), dw.clone()
    h2, df, de = swiglu_DWf_DW_dfg_kernel(dw, e.view(-1, inter), g.view(-1, inter))
    if interpret:
        er, gr = e_ref.view(-1, inter).requires_grad_(True), g_ref.view(-1, inter).requires_grad_(True)
        f = torch.nn.functional.silu(er)
        (f * gr).backward(dw_ref)
        torch.testing.assert_close(h.view(-1, inter), (f * gr).detach(), atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(h2, (f * gr).detach(), atol=1e-5, rtol=1e-5)  # DW now holds h
        torch.testing.assert_close(df, dw_ref * f.detach(), atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(de, er.grad, atol=1e-4, rtol=1e-4)


if __name__ == "__main__":
    main()
