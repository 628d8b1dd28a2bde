"""Rung 3, IR attribution: what Triton actually produced for a kernel, as facts tied to source lines.

    kernels = capture(solution, problem)          # every kernel a forward launches, every stage
    facts = extract_facts(kernels)                 # typed Facts (diagnoser.evidence.FACT_KINDS)
    facts = facts_for(solution, problem)           # both in one call

Capture runs through the `aot` backend (compile-only, any target, no device) or the JIT on a GPU
(`backend="cuda"`); Ascend targets run Triton-Ascend in its own interpreter (runner.ascend_ir).
Extractors are plain functions, one per fact kind, listed in `ladder.diagnoser.ir.nvidia.EXTRACTORS` and
`ladder.diagnoser.ir.ascend.EXTRACTORS`.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path

from ladder.diagnoser.evidence import Fact
from ladder.runner.capture import CapturedKernel


def extractors_for(kernel: CapturedKernel) -> dict:
    if kernel.target.startswith("npu"):
        from ladder.diagnoser.ir.ascend import EXTRACTORS
    else:
        from ladder.diagnoser.ir.nvidia import EXTRACTORS
    return EXTRACTORS


def extract_facts(kernels: list[CapturedKernel], kinds: list[str] | None = None) -> list[Fact]:
    """Facts about every kernel, kernel by kernel, in the extractors' order (optionally only `kinds`)."""
    from ladder.runner import hardware
    from ladder.diagnoser.ir.view import Context, KernelView

    launches_per_case = Counter(launch["case"] for kernel in kernels for launch in kernel.launches)
    facts: list[Fact] = []
    for kernel in kernels:
        context = Context(device=(hardware.for_target(kernel.target) if kernel.target else {}) or None,
                          launches_per_case=dict(launches_per_case))
        view = KernelView(kernel)
        for kind, extractor in extractors_for(kernel).items():
            if kinds is None or kind in kinds:
                facts.extend(extractor(view, context))
    return facts


def capture(solution: str | Path, problem: str | Path | None = None, *, case: int | None = None,
            target: str = "sm90", backend: str = "aot") -> list[CapturedKernel]:
    """Every kernel the solution's forward (or a script) launches: `aot` for `target`, or `cuda` (JIT)."""
    if backend == "aot":
        from ladder.runner.backends.aot import capture as aot_capture

        return aot_capture(solution, problem, case, target=target)
    if backend == "cuda":
        from ladder.runner.capture import capture as jit_capture

        return jit_capture(solution, problem, case)
    raise ValueError(f"unknown capture backend {backend!r}: use aot or cuda")


def facts_for(solution: str | Path, problem: str | Path | None = None, target: str = "sm90",
              backend: str = "aot", case: int | None = None) -> list[Fact]:
    """Capture and extract in one call: the API other rungs use."""
    return extract_facts(capture(solution, problem, case=case, target=target, backend=backend))


__all__ = ["capture", "extract_facts", "facts_for"]
