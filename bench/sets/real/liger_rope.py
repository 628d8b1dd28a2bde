# Copyright 2024 LinkedIn Corporation. Licensed under the BSD 2-Clause License (LICENSES/Liger-Kernel).
#
# Source: linkedin/Liger-Kernel, src/liger_kernel/ops/rope.py, release v0.8.5 (liger-kernel 0.8.5).
# Kernel and launch functions copied unchanged.
"""Liger-Kernel rotary position embedding on q and k (in place), forward and backward.

Realistic size: Llama-3-8B, batch 4 x seq 4096, 32 query heads and 8 KV heads of dim 128, bf16.
LADDER_SIZE=small (or --small): batch 1 x seq 16, 4 q heads, 2 kv heads, dim 64, fp32.
"""
import os
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def _triton_rope(
    q_ptr,
    q_row_stride,
    k_ptr,
    k_row_stride,
    cos,
    cos_row_stride,
    sin,
    sin_row_stride,
    sl,
    bs: tl.constexpr,
    cos_bs: tl.constexpr,
    n_qh: tl.constexpr,
    n_kh: tl.constexpr,
    hd: tl.constexpr,
    pad_n_qh: tl.constexpr,
    pad_n_kh: tl.constexpr,
    pad_hd: tl.constexpr,
    pad_rd: tl.constexpr,
    rd: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    BACKWARD_PASS: tl.constexpr = False,
):
    # q size: (bsz, seq_len, num_q_heads, head_dim)
    # q stride: (seq_len * num_q_heads * head_dim, num_q_heads * head_dim, head_dim, 1)
    # k size: (bsz, seq_len, num_kv_heads, head_dim)
    # k stride: (seq_len * num_kv_heads * head_dim, num_kv_heads * head_dim, head_dim, 1)

    # cos size: (1, seq_len, rotary_dim) or (bsz, seq_len, rotary_dim)
    # stride: (seq_len * rotary_dim, rotary_dim, 1)
    pid = tl.program_id(0).to(tl.int64)

    # locate start address
    q_ptr = q_ptr + pid * q_row_stride
    k_ptr = k_ptr + pid * k_row_stride

    # ####################################################################
    # get the cos(mθ_{i...d/2}) and sin(mθ_{i...d/2}) for token position
    # m of this program instance
    # ####################################################################

    # 1. program instances are laid out in a 1D vector of size bsz * seq_len, which
    # effectively represents a 2D grid of size [bsz, seq_len] with seq_len dimension
    # being the fastest changing dimension. Thus we can simply do pid // sl to get the batch index
    # and pid % sl to get the sequence index.
    # 2. We only need the left half of cos and sin matrix because the right half is just
    # a clone of the left half.
    batch_idx = pid // sl
    cos_row_idx = pid % sl
    cos = cos + tl.where(
        cos_bs == 1,
        cos_row_idx * cos_row_stride,
        batch_idx * (sl * cos_row_stride) + cos_row_idx * cos_row_stride,
    )
    sin = sin + tl.where(
        cos_bs == 1,
        cos_row_idx * sin_row_stride,
        batch_idx * (sl * sin_row_stride) + cos_row_idx * sin_row_stride,
    )

    cos_offsets = tl.arange(0, pad_rd // 2)
    cos_mask = cos_offsets < rd // 2
    cos_row = tl.load(cos + cos_offsets, mask=cos_mask, other=0)
    sin_row = tl.load(sin + cos_offsets, mask=cos_mask, other=0)

    # ####################################################################
    # Load the left and right half of the rotary portion of q and k for
    # the current program instance (i.e. for the current token) separately.
    # For partial RoPE (rd < hd), the non-rotary portion [rd:hd] remains
    # untouched in-place.
    # ####################################################################
    # left half of the rotary portion
    first_half_q_offsets = tl.arange(0, pad_n_qh)[:, None] * hd + tl.arange(0, pad_rd // 2)[None, :]
    first_half_k_offsets = tl.arange(0, pad_n_kh)[:, None] * hd + tl.arange(0, pad_rd // 2)[None, :]
    first_q_mask = (tl.arange(0, pad_n_qh)[:, None] < n_qh) & (tl.arange(0, pad_rd // 2)[None, :] < rd // 2)
    first_k_mask = (tl.arange(0, pad_n_kh)[:, None] < n_kh) & (tl.arange(0, pad_rd // 2)[None, :] < rd // 2)
    q_tile_1 = tl.load(q_ptr + first_half_q_offsets, mask=first_q_mask, other=0).to(sin_row.dtype)
    k_tile_1 = tl.load(k_ptr + first_half_k_offsets, mask=first_k_mask, other=0).to(sin_row.dtype)

    # right half of the rotary portion
    second_half_q_offsets = first_half_q_offsets + (rd // 2)
    second_half_k_offsets = first_half_k_offsets + (rd // 2)
    second_q_mask = first_q_mask
    second_k_mask = first_k_mask
    q_tile_2 = tl.load(q_ptr + second_half_q_offsets, mask=second_q_mask, other=0).to(sin_row.dtype)
    k_tile_2 = tl.load(k_ptr + second_half_k_offsets, mask=second_k_mask, other=0).to(sin_row.dtype)

    if not BACKWARD_PASS:
        # y = [x1, x2] * [cos, cos] + [-x2, x1] * [sin, sin]
        new_q_tile_1 = q_tile_1 * cos_row - q_tile_2 * sin_row
        tl.store(q_ptr + first_half_q_offsets, new_q_tile_1, mask=first_q_mask)
        new_q_tile_2 = q_tile_2 * cos_row + q_tile_1 * sin_row
        tl.store(q_ptr + second_half_q_offsets, new_q_tile_2, mask=second_q_mask)

        new_k_tile_1 = k_tile_1 * cos_row - k_tile_2 * sin_row
        tl.store(k_ptr + first_half_k_offsets, new_k_tile_1, mask=first_k_mask)
        new_k_tile_2 = k_tile_2 * cos_row + k_tile_1 * sin_row
        tl.store(k_ptr + second_half_k_offsets, new_k_tile_2, mask=second_k_mask)
    else:
        # with some math, we can get:
        # dy = [dx1, dx2] * [cos, cos] + [-dx2, dx1] * [-sin, -sin]
        new_q_tile_1 = q_tile_1 * cos_row + q_tile_2 * sin_row
        tl.store(q_ptr + first_half_q_offsets, new_q_tile_1, mask=first_q_mask)
        new_q_tile_2 = q_tile_2 * cos_row - q_tile_1 * sin_row
        tl.store(q_ptr + second_half_q_offsets, new_q_tile_2, mask=second_q_mask)

        new_k_tile_1 = k_tile_1 * cos_row + k_tile_2 * sin_row
        tl.store(k_ptr + first_half_k_offsets, new_k_tile_1, mask=first_k_mask)
        new_k_tile_2 = k_tile_2 * cos_row - k_tile_1 * sin_row
        tl.store(k_ptr + second_half_k_offsets, new_k_tile_2, mask=second_k_mask)


def _resolve_rotary_dim(cos, head_dim, rotary_dim):
    # By default the rotary width is the width of cos/sin, which holds for the duplicated
    # `cat(freqs, freqs)` layout (Llama, partial RoPE). A caller whose cos/sin are not duplicated
    # (GPT-OSS: width == rotary_dim / 2) has to pass the rotary width explicitly.
    if rotary_dim is None:
        return min(cos.shape[-1], head_dim)
    if rotary_dim % 2 != 0 or not 0 < rotary_dim <= head_dim:
        raise ValueError(f"rotary_dim must be even and in (0, head_dim={head_dim}]; got {rotary_dim}")
    if cos.shape[-1] < rotary_dim // 2:
        raise ValueError(
            f"cos/sin need at least rotary_dim / 2 = {rotary_dim // 2} entries in the last dimension; "
            f"got {cos.shape[-1]}"
        )
    return rotary_dim


def rope_forward(q, k, cos, sin, position_ids=None, unsqueeze_dim=1, rotary_dim=None):
    # Support 2D, 3D, and 4D cos/sin shapes
    if cos.ndim == 4:
        if cos.shape[unsqueeze_dim] == 1:
            cos = cos.squeeze(unsqueeze_dim)
            sin = sin.squeeze(unsqueeze_dim)
        elif cos.shape[1] == 1:
            cos = cos.squeeze(1)
            sin = sin.squeeze(1)
        else:
            cos = cos.squeeze()
            sin = sin.squeeze()
    if cos.ndim == 2:
        cos = cos.unsqueeze(0)
        sin = sin.unsqueeze(0)

    # transpose it back to the physical shape because Triton looks at the physical storage
    # note: q and k are incontiguous before the transformation and will become contiguous after transpose
    q = q.transpose(1, 2)
    k = k.transpose(1, 2)

    batch_size, seq_len, n_q_head, head_dim = q.shape
    n_kv_head = k.shape[2]
    rotary_dim = _resolve_rotary_dim(cos, head_dim, rotary_dim)

    pad_hd = triton.next_power_of_2(head_dim)
    pad_rd = triton.next_power_of_2(rotary_dim)
    pad_n_q_head = triton.next_power_of_2(n_q_head)
    pad_n_kv_head = triton.next_power_of_2(n_kv_head)
    BLOCK_SIZE = max(pad_n_q_head, pad_n_kv_head)

    n_row = batch_size * seq_len

    # ensure tensors passed into the kernel are contiguous. It will be no-op if they are already contiguous
    q = q.contiguous()
    k = k.contiguous()
    cos = cos.contiguous()
    sin = sin.contiguous()
    cos_batch_size = cos.shape[0]

    _triton_rope[(n_row,)](
        q,
        q.stride(1),
        k,
        k.stride(1),
        cos,
        cos.stride(-2),
        sin,
        sin.stride(-2),
        seq_len,
        batch_size,
        cos_batch_size,
        n_q_head,
        n_kv_head,
        head_dim,
        pad_n_q_head,
        pad_n_kv_head,
        pad_hd,
        pad_rd,
        rotary_dim,
        BLOCK_SIZE=BLOCK_SIZE,
        BACKWARD_PASS=False,
    )
    return q.transpose(1, 2), k.transpose(1, 2), cos, sin


def rope_backward(dq, dk, cos, sin, position_ids=None, unsqueeze_dim=1, rotary_dim=None):
    if cos.ndim == 4:
        if cos.shape[unsqueeze_dim] == 1:
            cos = cos.squeeze(unsqueeze_dim)
            sin = sin.squeeze(unsqueeze_dim)
        elif cos.shape[1] == 1:
            cos = cos.squeeze(1)
            sin = sin.squeeze(1)
        else:
            cos = cos.squeeze()
            sin = sin.squeeze()
    if cos.ndim == 2:
        cos = cos.unsqueeze(0)
        sin = sin.unsqueeze(0)

    dq = dq.transpose(1, 2)
    dk = dk.transpose(1, 2)

    batch_size, seq_len, n_q_head, head_dim = dq.shape
    cos_batch_size = cos.shape[0]
    n_kv_head = dk.shape[2]
    rotary_dim = _resolve_rotary_dim(cos, head_dim, rotary_dim)

    pad_hd = triton.next_power_of_2(head_dim)
    pad_rd = triton.next_power_of_2(rotary_dim)
    pad_n_q_head = triton.next_power_of_2(n_q_head)
    pad_n_kv_head = triton.next_power_of_2(n_kv_head)
    BLOCK_SIZE = max(pad_n_q_head, pad_n_kv_head)

    n_row = batch_size * seq_len

    # ensure dq and dk are contiguous
    dq = dq.contiguous()
    dk = dk.contiguous()
    cos = cos.contiguous()
    sin = sin.contiguous()

    # backward is similar to forward except swapping few ops
    _triton_rope[(n_row,)](
        dq,
        dq.stride(1),
        dk,
        dk.stride(1),
        cos,
        cos.stride(-2),
        sin,
        sin.stride(-2),
        seq_len,
        batch_size,
        cos_batch_size,
        n_q_head,
        n_kv_head,
        head_dim,
        pad_n_q_head,
        pad_n_kv_head,
        pad_hd,
        pad_rd,
        rotary_dim,
        BLOCK_SIZE=BLOCK_SIZE,
        BACKWARD_PASS=True,
    )
    return dq.transpose(1, 2), dk.transpose(1, 2)


def main():
    small = os.environ.get("LADDER_SIZE") == "small" or "--small" in sys.argv
    interpret = os.environ.get("TRITON_INTERPRET") == "1"
    device = "cpu" if interpret else "cuda"
    batch, seq, n_q, n_kv, dim, dtype = (1, 16, 4, 2, 64, torch.float32) if small else (4, 4096, 32, 8, 128, torch.bfloat16)
    # HuggingFace layout: (batch, heads, seq, dim) views of (batch, seq, heads, dim) storage
    q = torch.randn(batch, seq, n_q, dim, device=device, dtype=dtype).transpose(1, 2)
    k = torch.randn(batch, seq, n_kv, dim, device=device, dtype=dtype).transpose(1, 2)
    inv_freq = 1.0 / (500000.0 ** (torch.arange(0, dim, 2, device=device, dtype=torch.float32) / dim))
    freqs = torch.outer(torch.arange(seq, device=device, dtype=torch.float32), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos().to(dtype)[None], emb.sin().to(dtype)[None]
    q_ref, k_ref = q.clone(), k.clone()
    q_out, k_out, cos, sin = rope_forward(q, k, cos, sin)
    dq, dk = rope_backward(q_out.clone(), k_out.clone(), cos, sin)
    if interpret:
        def rotate_half(x):
            return torch.cat((-x[..., dim // 2:], x[..., : dim // 2]), dim=-1)

        c, s = cos[:, None], sin[:, None]
        torch.testing.assert_close(q_out, q_ref * c + rotate_half(q_ref) * s, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(k_out, k_ref * c + rotate_half(k_ref) * s, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(dq, q_ref, atol=1e-4, rtol=1e-4)  # the inverse rotation
        torch.testing.assert_close(dk, k_ref, atol=1e-4, rtol=1e-4)


if __name__ == "__main__":
    main()
