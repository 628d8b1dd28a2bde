import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _rope_kernel(qkv_ptr, out_ptr, pos_ptr, cache_ptr, n_rot_heads, stride_qkv, stride_out,
                 HALF: tl.constexpr, BLOCK_H: tl.constexpr):
    token = tl.program_id(0)
    pos = tl.load(pos_ptr + token)
    offs_d = tl.arange(0, HALF)
    offs_h = tl.arange(0, BLOCK_H)
    cos_row = cache_ptr + pos * (2 * HALF)
    cos = tl.load(cos_row + offs_d)[None, :]
    sin = tl.load(cos_row + HALF + offs_d)[None, :]

    mask = offs_h[:, None] < n_rot_heads
    offs = offs_h[:, None] * (2 * HALF) + offs_d[None, :]
    src = qkv_ptr + token * stride_qkv + offs
    dst = out_ptr + token * stride_out + offs
    x1 = tl.load(src, mask=mask, other=0.0).to(tl.float32)
    x2 = tl.load(src + HALF, mask=mask, other=0.0).to(tl.float32)
    tl.store(dst, (x1 * cos - x2 * sin).to(out_ptr.dtype.element_ty), mask=mask)
    tl.store(dst + HALF, (x2 * cos + x1 * sin).to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, q_heads, kv_heads, head_dim):
        super().__init__()
        self.q_heads, self.kv_heads, self.head_dim = q_heads, kv_heads, head_dim

    def forward(self, qkv, positions, cos_sin_cache):
        tokens = qkv.shape[0]
        n_rot = self.q_heads + self.kv_heads
        # queries and keys are adjacent in the fused projection: rotate them as one block of heads
        out = torch.empty((tokens, n_rot, self.head_dim), device=qkv.device, dtype=qkv.dtype)
        block_h = triton.next_power_of_2(n_rot)
        _rope_kernel[(tokens,)](
            qkv, out, positions, cos_sin_cache, n_rot, qkv.stride(0), out.stride(0),
            HALF=self.head_dim // 2, BLOCK_H=block_h, num_warps=8 if block_h * self.head_dim >= 8192 else 4,
        )
        return out[:, :self.q_heads], out[:, self.q_heads:]
