# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: Copyright contributors to the vLLM project
#
# Source: vllm-project/vllm, vllm/v1/attention/ops/triton_merge_attn_states.py, release v0.33.0 (vllm 0.33.0).
# Copied unchanged except its vLLM imports (current_platform answers for an NVIDIA GPU).
"""vLLM's merge of two partial attention results by their log-sum-exps (prefix cache + new tokens).

Realistic size: chunked prefill of Llama-3-70B (TP 1 share), 16384 tokens x 64 heads x dim 128, bf16.
LADDER_SIZE=small (or --small): 16 tokens x 4 heads x dim 64, fp32.
"""

import os
import sys
import torch

import triton
import triton.language as tl

class current_platform:
    """What vllm.platforms.current_platform answers on the NVIDIA Hopper GPU the set targets."""

    @staticmethod
    def is_rocm():
        return False

    @staticmethod
    def is_xpu():
        return False

    @staticmethod
    def is_fp8_fnuz():
        return False

    @staticmethod
    def fp8_dtype():
        return torch.float8_e4m3fn

    @staticmethod
    def has_device_capability(capability):
        return capability <= 90

float8_info = torch.finfo(current_platform.fp8_dtype())


# Implements section 2.2 of https://www.arxiv.org/pdf/2501.01005
# can be used to combine partial attention results (in the split-KV case)
def merge_attn_states(
    output: torch.Tensor,
    prefix_output: torch.Tensor,
    prefix_lse: torch.Tensor,
    suffix_output: torch.Tensor,
    suffix_lse: torch.Tensor,
    output_lse: torch.Tensor | None = None,
    prefill_tokens_with_context: int | None = None,
    output_scale: torch.Tensor | None = None,
) -> None:
    num_tokens = output.shape[0]
    num_query_heads = output.shape[1]
    head_size = output.shape[2]
    padded_head_size = triton.next_power_of_2(head_size)
    # We assume the output stride on num_head is not always as same as the
    # `suffix_output` and `prefix_output`, as them might be padded by the
    # attention backend.
    prefix_head_stride = prefix_output.stride(1)
    output_head_stride = output.stride(1)
    # lse tensors are [NUM_HEADS, NUM_TOKENS] but may be non-contiguous views
    # (e.g. a transpose of a backend's [NUM_TOKENS, NUM_HEADS] output), so index
    # them by their actual strides rather than assuming a contiguous layout.
    prefix_lse_head_stride = prefix_lse.stride(0)
    prefix_lse_token_stride = prefix_lse.stride(1)
    suffix_lse_head_stride = suffix_lse.stride(0)
    suffix_lse_token_stride = suffix_lse.stride(1)
    output_lse_head_stride = output_lse.stride(0) if output_lse is not None else 0
    output_lse_token_stride = output_lse.stride(1) if output_lse is not None else 0

    # If prefill_tokens_with_context is None, all tokens should use prefix context
    if prefill_tokens_with_context is None:
        prefill_tokens_with_context = num_tokens

    # TODO(woosuk): Use CUDA kernel instead of Triton to minimize CPU overhead.
    merge_attn_states_kernel[(num_tokens, num_query_heads)](
        output,
        output_lse,
        prefix_output,
        prefix_lse,
        suffix_output,
        suffix_lse,
        prefix_head_stride,
        output_head_stride,
        prefix_lse_head_stride,
        prefix_lse_token_stride,
        suffix_lse_head_stride,
        suffix_lse_token_stride,
        output_lse_head_stride,
        output_lse_token_stride,
        output_scale,
        prefill_tokens_with_context,
        head_size,
        padded_head_size,
        output_lse is not None,
        output_scale is not None,
    )


@triton.jit
def merge_attn_states_kernel(
    output,  # [NUM_TOKENS, NUM_HEADS, HEAD_SIZE]
    output_lse,  # [NUM_HEADS, NUM_TOKENS]
    prefix_output,  # [NUM_TOKENS, NUM_HEADS, HEAD_SIZE]
    prefix_lse,  # [NUM_HEADS, NUM_TOKENS]
    suffix_output,  # [NUM_TOKENS, NUM_HEADS, HEAD_SIZE]
    suffix_lse,  # [NUM_HEADS, NUM_TOKENS]
    prefix_head_stride,
    output_head_stride,
    prefix_lse_head_stride,
    prefix_lse_token_stride,
    suffix_lse_head_stride,
    suffix_lse_token_stride,
    output_lse_head_stride,
    output_lse_token_stride,
    output_scale,  # scale tensor or None
    prefill_tokens_with_context,
    HEAD_SIZE: tl.constexpr,
    PADDED_HEAD_SIZE: tl.constexpr,
    OUTPUT_LSE: tl.constexpr,
    USE_FP8: tl.constexpr,
    FP8_MIN: tl.constexpr = float8_info.min,
    FP8_MAX: tl.constexpr = float8_info.max,
):
    token_idx = tl.program_id(0)
    head_idx = tl.program_id(1)
    num_heads = tl.num_programs(1)

    prefix_mask = token_idx < prefill_tokens_with_context

    head_arange = tl.arange(0, PADDED_HEAD_SIZE)
    head_mask = head_arange < HEAD_SIZE

    # For tokens without context (token_idx >= prefill_tokens_with_context),
    # directly copy from suffix_output
    if not prefix_mask:
        s_lse = tl.load(
            suffix_lse
            + head_idx * suffix_lse_head_stride
            + token_idx * suffix_lse_token_stride
        )
        if OUTPUT_LSE:
            tl.store(
                output_lse
                + head_idx * output_lse_head_stride
                + token_idx * output_lse_token_stride,
                s_lse,
            )

        s_out = tl.load(
            suffix_output
            + token_idx * num_heads * prefix_head_stride
            + head_idx * prefix_head_stride
            + head_arange,
            mask=head_mask,
        )

        if USE_FP8:
            s_out = s_out * (1.0 / tl.load(output_scale))
            s_out = tl.clamp(s_out, FP8_MIN, FP8_MAX)
            s_out = s_out.to(output.dtype.element_ty)

        tl.store(
            output
            + token_idx * num_heads * output_head_stride
            + head_idx * output_head_stride
            + head_arange,
            s_out,
            mask=head_mask,
        )
        return

    # For tokens with context (token_idx < prefill_tokens_with_context),
    # perform normal merge operation
    p_lse = tl.load(
        prefix_lse
        + head_idx * prefix_lse_head_stride
        + token_idx * prefix_lse_token_stride
    )
    s_lse = tl.load(
        suffix_lse
        + head_idx * suffix_lse_head_stride
        + token_idx * suffix_lse_token_stride
    )

    # FA2 and FA3 have different behavior for when the sum-exp is 0, this namely
    # arises with 0 len seqlens. FA3 returns -inf here while FA2 returns inf.
    # If we see an inf assume FA2 and convert inf to -inf for consistency
    # and correctness. Inf generally doesn't make sense in this context outside
    # of undefined-behavior/FA2-case, so I think this a safe assumption.
    p_lse = float("-inf") if p_lse == float("inf") else p_lse
    s_lse = float("-inf") if s_lse == float("inf") else s_lse

    max_lse = tl.maximum(p_lse, s_lse)
    p_lse = p_lse - max_lse
    s_lse = s_lse - max_lse
    # Will reuse precomputed Exp values for scale factor computation.
    p_se = tl.exp(p_lse)
    s_se = tl.exp(s_lse)
    out_se = p_se + s_se

    if OUTPUT_LSE:
        out_lse = tl.log(out_se) + max_lse
        # Both sides empty (max_lse == -inf) => undefined merge; keep -inf so
        # downstream merges continue to treat the token as empty.
        out_lse = tl.where(max_lse == float("-inf"), float("-inf"), out_lse)
        tl.store(
            output_lse
            + head_idx * output_lse_head_stride
            + token_idx * output_lse_token_stride,
            out_lse,
        )

    p_out = tl.load(
        prefix_output
        + token_idx * num_heads * prefix_head_stride
        + head_idx * prefix_head_stride
        + head_arange,
        mask=head_mask,
    )
    s_out = tl.load(
        suffix_output
        + token_idx * num_heads * prefix_head_stride
        + head_idx * prefix_head_stride
        + head_arange,
        mask=head_mask,
    )

    # NOTE(woosuk): Be careful with the numerical stability.
    # We should compute the scale first, and then multiply it with the output.
    # Do not multiply the output with tl.exp(p_lse) or tl.exp(s_lse) directly.
    p_scale = p_se / out_se
    s_scale = s_se / out_se
    out = p_out * p_scale + s_out * s_scale
    # If both sides are empty (max_lse == -inf) the scales are 0/0 = NaN; emit
    # zeros rather than NaN.
    out = tl.where(max_lse == float("-inf"), 0.0, out)

    if USE_FP8:
        out = out * (1.0 / tl.load(output_scale))
        out = tl.clamp(out, FP8_MIN, FP8_MAX)
        out = out.to(output.dtype.element_ty)

    tl.store(
        output
        + token_idx * num_heads * output_head_stride
        + head_idx * output_head_stride
        + head_arange,
        out,
        mask=head_mask,
    )

def main():
    small = os.environ.get("LADDER_SIZE") == "small" or "--small" in sys.argv
    interpret = os.environ.get("TRITON_INTERPRET") == "1"
    device = "cpu" if interpret else "cuda"
    tokens, heads, dim, dtype = (16, 4, 64, torch.float32) if small else (16384, 64, 128, torch.bfloat16)
    prefix = torch.randn(tokens, heads, dim, device=device, dtype=dtype)
    suffix = torch.randn(tokens, heads, dim, device=device, dtype=dtype)
    prefix_lse = torch.randn(heads, tokens, device=device, dtype=torch.float32)
    suffix_lse = torch.randn(heads, tokens, device=device, dtype=torch.float32)
    output = torch.empty_like(prefix)
    output_lse = torch.empty_like(prefix_lse)
    merge_attn_states(output, prefix, prefix_lse, suffix, suffix_lse, output_lse)
    if interpret:
        lse = torch.logaddexp(prefix_lse, suffix_lse)
        wp = torch.exp(prefix_lse - lse).T[..., None]
        ws = torch.exp(suffix_lse - lse).T[..., None]
        torch.testing.assert_close(output, prefix * wp + suffix * ws, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(output_lse, lse, atol=1e-5, rtol=1e-5)

if __name__ == "__main__":
    main()
