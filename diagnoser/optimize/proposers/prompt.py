"""What a model is asked in a round: the brief (cut to ``--evidence``) and how the judge will check the answer.

The rules below are the judge's (``runner``): saying them up front costs a few hundred tokens and
saves the rounds a model would lose to rejections it could not have guessed. The reply format is
the one ``reply.solution_from`` reads.
"""
from __future__ import annotations

from ladder.diagnoser.optimize.brief import Brief

SYSTEM = """You are an expert in GPU kernels and Triton. You rewrite a Triton solution so that it is faster \
while staying correct. Your rewrite is judged by a harness, not by a person:

- it runs `ModelNew(*get_init_inputs())(*get_inputs())` on fresh random inputs of every case, several \
seeds, and compares every output to the PyTorch reference `Model` (shape, dtype and values);
- forward must do its compute in Triton kernels (`@triton.jit`); torch compute ops in forward \
(torch.matmul, x + y, F.softmax...) are rejected; allocating outputs (torch.empty...) and views \
(reshape, view, flatten) are allowed;
- forbidden: caching outputs across calls, try/except fallbacks, side streams, threads, new processes, \
writing files, importing the harness, introspection or monkey-patching;
- it is timed against the best version so far; only a version faster on the geomean over cases, and \
slower on none, replaces it.

Change the algorithm when the evidence calls for it (fuse passes, change the reduction axis or the \
tiling, fuse a chain of operators), not only the launch configuration. Learn from the earlier rounds: \
do not repeat what failed.

Reply with one line saying what you changed and why (name the catalog pattern ids you addressed, if \
any), then the complete solution file in one ```python block. The file must define class ModelNew \
with the same constructor arguments as Model."""


def messages(brief: Brief) -> list[dict[str, str]]:
    """The chat messages of one request."""
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": brief.to_markdown()}]
