"""Attention forward with an online softmax (the flash-attention scheme): one program per
64-query block of one (batch, head); K and V are streamed in 64-key blocks."""
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def attention_kernel(
    q_ptr, k_ptr, v_ptr, o_ptr,
    stride_qb, stride_qh, stride_qs,
    stride_kb, stride_kh, stride_ks,
    stride_vb, stride_vh, stride_vs,
    stride_ob, stride_oh, stride_os,
    n_heads, seq_len, sm_scale,
    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_bh = tl.program_id(1)
    batch = pid_bh // n_heads
    head = pid_bh % n_heads
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)

    q_base = q_ptr + batch * stride_qb + head * stride_qh
    k_base = k_ptr + batch * stride_kb + head * stride_kh
    v_base = v_ptr + batch * stride_vb + head * stride_vh
    q = tl.load(q_base + offs_m[:, None] * stride_qs + offs_d[None, :],
                mask=offs_m[:, None] < seq_len, other=0.0)

    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    for start_n in range(0, seq_len, BLOCK_N):
        keys = start_n + offs_n
        # K loaded as a (HEAD_DIM, BLOCK_N) tile so that q @ k is a plain dot.
        k = tl.load(k_base + keys[None, :] * stride_ks + offs_d[:, None],
                    mask=keys[None, :] < seq_len, other=0.0)
        qk = tl.dot(q, k) * sm_scale
        qk = tl.where(keys[None, :] < seq_len, qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, axis=1))
        p = tl.exp(qk - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_base + keys[:, None] * stride_vs + offs_d[None, :],
                    mask=keys[:, None] < seq_len, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new

    out = acc / l_i[:, None]
    o_base = o_ptr + batch * stride_ob + head * stride_oh
    tl.store(o_base + offs_m[:, None] * stride_os + offs_d[None, :], out.to(o_ptr.dtype.element_ty),
             mask=offs_m[:, None] < seq_len)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
        Q, K, V = Q.contiguous(), K.contiguous(), V.contiguous()
        batch, n_heads, seq_len, head_dim = Q.shape
        out = torch.empty_like(Q)
        BLOCK_M, BLOCK_N = 64, 64
        grid = (triton.cdiv(seq_len, BLOCK_M), batch * n_heads)
        attention_kernel[grid](
            Q, K, V, out,
            Q.stride(0), Q.stride(1), Q.stride(2),
            K.stride(0), K.stride(1), K.stride(2),
            V.stride(0), V.stride(1), V.stride(2),
            out.stride(0), out.stride(1), out.stride(2),
            n_heads, seq_len, 1.0 / math.sqrt(head_dim),
            HEAD_DIM=head_dim, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
            num_warps=4,
        )
        return out
