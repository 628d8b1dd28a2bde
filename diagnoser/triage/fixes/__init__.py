"""Mechanical fixes: the catalog id -> a rewrite `fix(source, finding, context) -> new source`.

A fix keeps the kernel's semantics (every rewrite is tested under the Triton interpreter) and
raises `NotApplicable` with a one-line reason when the kernel as written does not allow it. These
are the offline proposer's moves: `apply_fix` runs triage, picks the finding and rewrites.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Optional

from ladder.diagnoser.evidence import Finding

from ..context import TriageContext
from .autotune import fix_hardcoded_config
from .edit import NotApplicable
from .epilogue import fix_unfused_epilogue
from .grouped import fix_grouped_order
from .hints import fix_scalar_access
from .moments import fix_one_pass_moments
from .npu_blocks import fix_ub_overflow, fix_unaligned_tail_axis
from .npu_gather import fix_discrete_access
from .npu_dtypes import fix_int64_scalar_fallback, fix_where_condition_dtype
from .npu_grid import fix_grid_exceeds_cores
from .online import fix_online_softmax
from .padding import fix_padded_gemm
from .reductions import fix_loop_carried_reduction
from .split import fix_split_reduction
from .tiles import fix_mma_v2, fix_tiny_block, fix_unpipelined

Fix = Callable[[str, Optional[Finding], Optional[TriageContext]], str]


def first_that_applies(*fixes: Fix) -> Fix:
    """One fix for a pattern with several remedies, tried in order: the first that applies rewrites;
    when none does, the reasons of all of them are the one line."""
    def fix(source: str, finding: Optional[Finding], ctx: Optional[TriageContext]) -> str:
        reasons = []
        for candidate in fixes:
            try:
                return candidate(source, finding, ctx)
            except NotApplicable as refused:
                reasons.append(str(refused))
        raise NotApplicable("; ".join(reasons))
    return fix


FIXES: dict[str, Fix] = {
    "nv.hardcoded-config": fix_hardcoded_config,
    "nv.tiny-block": fix_tiny_block,
    "nv.mma-v2-on-hopper": fix_mma_v2,
    "nv.unpipelined-loop": fix_unpipelined,
    "nv.gemm-no-grouped-order": fix_grouped_order,
    # hints where the alignment is true but unproven; a GEMM on zero-padded operands where it is false
    "nv.scalar-access": first_that_applies(fix_scalar_access, fix_padded_gemm),
    "nv.unfused-epilogue": fix_unfused_epilogue,
    "nv.loop-carried-reduction": fix_loop_carried_reduction,
    # few programs over a long reduction: split it over a second grid axis, partial sums added atomically
    "nv.small-grid": fix_split_reduction,
    # a softmax's max and sum passes in one online pass; a layer norm's mean and variance passes in one
    "nv.redundant-global-traffic": first_that_applies(fix_online_softmax, fix_one_pass_moments),
    "npu.grid-exceeds-cores": fix_grid_exceeds_cores,
    "npu.int64-scalar-fallback": fix_int64_scalar_fallback,
    "npu.where-condition-dtype": fix_where_condition_dtype,
    "npu.ub-overflow": fix_ub_overflow,
    "npu.unaligned-tail-axis": fix_unaligned_tail_axis,
    "npu.discrete-access": fix_discrete_access,
}


def apply_fix(pattern: str, solution: str | Path, problem: str | Path | None = None,
              finding: Optional[Finding] = None) -> str:
    """The solution's source with `pattern` fixed (for `finding`, or wherever it applies)."""
    from .. import build_context
    from ..source import load_source

    if pattern not in FIXES:
        raise NotApplicable(f"{pattern}: no mechanical fix (see `ladder explain {pattern}`)")
    path, text = load_source(solution)
    ctx = build_context(path, text, problem, None, None, "ascend" if pattern.startswith("npu.") else None)
    return FIXES[pattern](text, finding, ctx)


__all__ = ["FIXES", "NotApplicable", "apply_fix"]
