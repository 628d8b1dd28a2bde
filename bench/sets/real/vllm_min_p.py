# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: Copyright contributors to the vLLM project
#
# Source: vllm-project/vllm, vllm/v1/worker/gpu/sample/min_p.py, release v0.33.0 (vllm 0.33.0).
# Copied unchanged except its vLLM import of tl/triton.
"""vLLM's min-p sampling filter: two passes over each token's logits (row max, then mask below
max + log(min_p)), in place.

Realistic size: a decode step of 256 sequences over Llama-3's vocabulary of 128256, fp32 logits.
LADDER_SIZE=small (or --small): 4 sequences x vocabulary 3000.
"""

import os
import sys
import torch

import triton
import triton.language as tl


@triton.jit
def _min_p_kernel(
    logits_ptr,
    logits_stride,
    expanded_idx_mapping_ptr,
    min_p_ptr,
    vocab_size,
    BLOCK_SIZE: tl.constexpr,
):
    token_idx = tl.program_id(0).to(tl.int64)
    req_state_idx = tl.load(expanded_idx_mapping_ptr + token_idx)
    min_p = tl.load(min_p_ptr + req_state_idx).to(tl.float32)
    if min_p == 0.0:
        return

    max_val = float("-inf")
    for i in range(0, vocab_size, BLOCK_SIZE):
        block = i + tl.arange(0, BLOCK_SIZE)
        mask = block < vocab_size
        logits = tl.load(
            logits_ptr + token_idx * logits_stride + block,
            mask=mask,
            other=float("-inf"),
        )
        max_val = tl.max(tl.maximum(logits, max_val))
    max_val = max_val.to(tl.float32)  # type: ignore

    threshold = max_val + tl.log(min_p)
    for i in range(0, vocab_size, BLOCK_SIZE):
        block = i + tl.arange(0, BLOCK_SIZE)
        mask = block < vocab_size
        logits = tl.load(
            logits_ptr + token_idx * logits_stride + block,
            mask=mask,
            other=float("-inf"),
        )
        logits = tl.where(logits < threshold, float("-inf"), logits)
        tl.store(logits_ptr + token_idx * logits_stride + block, logits, mask=mask)


def apply_min_p(
    logits: torch.Tensor, expanded_idx_mapping: torch.Tensor, min_p: torch.Tensor
) -> None:
    num_tokens, vocab_size = logits.shape
    BLOCK_SIZE = 1024
    _min_p_kernel[(num_tokens,)](
        logits,
        logits.stride(0),
        expanded_idx_mapping,
        min_p,
        vocab_size,
        BLOCK_SIZE=BLOCK_SIZE,
    )

def main():
    small = os.environ.get("LADDER_SIZE") == "small" or "--small" in sys.argv
    interpret = os.environ.get("TRITON_INTERPRET") == "1"
    device = "cpu" if interpret else "cuda"
    tokens, vocab = (4, 3000) if small else (256, 128256)
    logits = torch.randn(tokens, vocab, device=device)
    expected = logits.clone()
    idx_mapping = torch.arange(tokens, device=device, dtype=torch.int32)
    min_p = torch.full((tokens,), 0.1, device=device)
    min_p[0] = 0.0  # a request without min-p
    apply_min_p(logits, idx_mapping, min_p)
    if interpret:
        threshold = expected.max(dim=-1, keepdim=True).values + torch.log(min_p[:, None])
        expected[1:] = torch.where(expected[1:] < threshold[1:], float("-inf"), expected[1:])
        torch.testing.assert_close(logits, expected)

if __name__ == "__main__":
    main()
