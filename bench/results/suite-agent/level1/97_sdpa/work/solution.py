"""Attention forward (online softmax) with Hopper-sized tiles, exp2, and the key mask only where a
block runs past the sequence.

The initial kernel used 64x64 tiles with 4 warps and no stage hint, masked and compared every key
block, and computed exp with a separate scale multiply. Here: 128-query tiles (two warpgroups'
wgmma for 8 warps), autotuned key-block size and pipeline depth, the softmax scale folded into
log2(e) so each score costs one multiply and one exp2, and full key blocks run unmasked (only the
last, partial one is masked).
"""
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl


def _configs():
    shapes = [(128, 64, 3, 4), (128, 64, 4, 8), (128, 128, 3, 8), (64, 64, 4, 4), (128, 32, 4, 4)]
    return [triton.Config({"BLOCK_M": m, "BLOCK_N": n}, num_stages=s, num_warps=w) for m, n, s, w in shapes]


@triton.jit
def _attend(acc, l_i, m_i, q, k_base, v_base, stride_ks, stride_vs, start_n, seq_len, qk_scale, offs_n, offs_d,
            MASKED: tl.constexpr):
    keys = start_n + offs_n
    if MASKED:
        k = tl.load(k_base + keys[None, :] * stride_ks + offs_d[:, None], mask=keys[None, :] < seq_len, other=0.0)
    else:
        k = tl.load(k_base + keys[None, :] * stride_ks + offs_d[:, None])
    qk = tl.dot(q, k) * qk_scale
    if MASKED:
        qk = tl.where(keys[None, :] < seq_len, qk, float("-inf"))
    m_new = tl.maximum(m_i, tl.max(qk, axis=1))
    p = tl.math.exp2(qk - m_new[:, None])
    alpha = tl.math.exp2(m_i - m_new)
    l_i = l_i * alpha + tl.sum(p, axis=1)
    if MASKED:
        v = tl.load(v_base + keys[:, None] * stride_vs + offs_d[None, :], mask=keys[:, None] < seq_len, other=0.0)
    else:
        v = tl.load(v_base + keys[:, None] * stride_vs + offs_d[None, :])
    acc = acc * alpha[:, None]
    acc = tl.dot(p.to(v.dtype), v, acc)
    return acc, l_i, m_new


def _without_spills(configs, named_args, **kwargs):
    """128-query tiles of a 128-wide head need two warpgroups (4 warps spill their accumulator)."""
    if kwargs["HEAD_DIM"] < 128:
        return configs
    return [c for c in configs if c.kwargs["BLOCK_M"] < 128 or c.num_warps >= 8]


@triton.autotune(configs=_configs(), key=["seq_len", "HEAD_DIM"], prune_configs_by={"early_config_prune": _without_spills})
@triton.jit
def attention_kernel(
    q_ptr, k_ptr, v_ptr, o_ptr,
    stride_qb, stride_qh, stride_qs,
    stride_kb, stride_kh, stride_ks,
    stride_vb, stride_vh, stride_vs,
    stride_ob, stride_oh, stride_os,
    n_heads, seq_len, qk_scale,
    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_bh = tl.program_id(1)
    batch = pid_bh // n_heads
    head = pid_bh % n_heads
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)

    q_base = q_ptr + batch.to(tl.int64) * stride_qb + head * stride_qh
    k_base = k_ptr + batch.to(tl.int64) * stride_kb + head * stride_kh
    v_base = v_ptr + batch.to(tl.int64) * stride_vb + head * stride_vh
    q = tl.load(q_base + offs_m[:, None] * stride_qs + offs_d[None, :], mask=offs_m[:, None] < seq_len, other=0.0)

    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    full_blocks_end = (seq_len // BLOCK_N) * BLOCK_N
    for start_n in range(0, full_blocks_end, BLOCK_N):
        acc, l_i, m_i = _attend(acc, l_i, m_i, q, k_base, v_base, stride_ks, stride_vs, start_n, seq_len,
                                qk_scale, offs_n, offs_d, MASKED=False)
    if full_blocks_end < seq_len:
        acc, l_i, m_i = _attend(acc, l_i, m_i, q, k_base, v_base, stride_ks, stride_vs, full_blocks_end, seq_len,
                                qk_scale, offs_n, offs_d, MASKED=True)

    out = acc / l_i[:, None]
    o_base = o_ptr + batch.to(tl.int64) * stride_ob + head * stride_oh
    tl.store(o_base + offs_m[:, None] * stride_os + offs_d[None, :], out.to(o_ptr.dtype.element_ty),
             mask=offs_m[:, None] < seq_len)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
        Q, K, V = Q.contiguous(), K.contiguous(), V.contiguous()
        batch, n_heads, seq_len, head_dim = Q.shape
        out = torch.empty_like(Q)

        def grid(meta):
            return (triton.cdiv(seq_len, meta["BLOCK_M"]), batch * n_heads)

        attention_kernel[grid](
            Q, K, V, out,
            Q.stride(0), Q.stride(1), Q.stride(2),
            K.stride(0), K.stride(1), K.stride(2),
            V.stride(0), V.stride(1), V.stride(2),
            out.stride(0), out.stride(1), out.stride(2),
            n_heads, seq_len, 1.4426950408889634 / math.sqrt(head_dim),
            HEAD_DIM=head_dim,
        )
        return out
