"""The ``rules`` proposer: the catalog's mechanical fixes for what the diagnosis found, no model.

Each round it proposes, for the best kernel so far:

1. every mechanical fix (``ladder.diagnoser.triage.fixes``) whose pattern the evidence names, one per
   candidate, in the order ``FIX_ORDERS`` gives for the run's backend;
2. all of them applied one after the other, as one more candidate (fixes compose: free the tiles
   into an autotune space, then group the GEMM grid, then pipeline its K loop...);

skipping every source it has proposed before (the history says which). When the timing shows a
case short of its roofline and no finding names the configuration, the tile/warp/stage search of
``nv.hardcoded-config`` is tried anyway: a gap nothing else explains implicates those knobs first,
and Triton's autotuner times the configurations on the device. With ``--evidence none``
or ``timing`` it sees no findings and tries every fix blindly, each fix deciding from the source
alone whether it applies: the difference is what the diagnosis adds. A fix that does not apply
says why (``NotApplicable``), and the proposer moves on. When nothing new is left, it proposes
nothing and the loop stops: that is where the rules run out and a rewrite by a model or an agent
has to take over.
"""
from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path
from typing import Any

from ladder.diagnoser.optimize.ascend import is_ascend
from ladder.diagnoser.optimize.brief import Brief
from ladder.diagnoser.optimize.proposers import Proposal

# The order fixes are tried and composed in, per backend. NVIDIA: the configuration first (it frees
# the tile sizes the others then tune around), then the elementwise epilogue moved into its producer
# (one kernel fewer for the rest to tune), a softmax's max and sum passes fused, the grid order,
# the loop pipelining, the dot's tile shape, the reduction taken out of the loop, then split over
# programs, the access width.
# Ascend: the grid first (it puts the body in a loop over blocks, in which the others then work),
# then the block size the unified buffer holds, the tail alignment, the gathers, the data types.
CONFIG_SEARCH = "nv.hardcoded-config"
ROOFLINE_GAP = 90.0  # % of the roofline floor below which a case has a gap to explain
FIX_ORDERS = {
    "nvidia": ("nv.hardcoded-config", "nv.unfused-epilogue", "nv.redundant-global-traffic", "nv.tiny-block",
               "nv.gemm-no-grouped-order", "nv.unpipelined-loop", "nv.mma-v2-on-hopper",
               "nv.loop-carried-reduction", "nv.small-grid", "nv.scalar-access"),
    "ascend": ("npu.grid-exceeds-cores", "npu.ub-overflow", "npu.unaligned-tail-axis", "npu.discrete-access",
               "npu.int64-scalar-fallback", "npu.where-condition-dtype"),
}


class RulesProposer:
    """The catalog's fixes for one backend's patterns: the run's target (`sm90`, `ascend`) picks
    which, so that a blind run never rewrites a GPU kernel for an NPU or the other way round."""

    name = "rules"

    def __init__(self, target: str = "sm90", **settings: Any):
        self.backend = "ascend" if is_ascend(target) else "nvidia"
        self.settings = settings

    def propose(self, brief: Brief, count: int) -> list[Proposal]:
        from ladder.diagnoser.triage.fixes import FIXES

        tried = {entry["source_hash"] for past in brief.history for entry in past.get("proposals", [])
                 if entry.get("source_hash") and entry.get("judged", True)}  # an unjudged one is proposed again
        tried.add(source_hash(brief.best_source))
        found = {f.get("pattern"): f for f in brief.findings if f.get("pattern") in FIXES}
        blind = brief.evidence_level != "full"
        order = FIX_ORDERS[self.backend]
        implicated = set(found) | ({CONFIG_SEARCH} if short_of_roofline(brief) and CONFIG_SEARCH in order else set())
        patterns = [p for p in order if p in FIXES and (blind or p in implicated)]
        proposals: list[Proposal] = []
        composed, composed_patterns = brief.best_source, []
        for pattern in patterns:
            single, _ = fixed(pattern, brief.best_source, brief.best_path, brief.problem_path)
            if single is not None and source_hash(single) not in tried:
                tried.add(source_hash(single))
                proposals.append(self._proposal(single, [pattern], found, blind))
            stacked, _ = fixed(pattern, composed, brief.best_path, brief.problem_path)
            if stacked is not None:
                composed, composed_patterns = stacked, composed_patterns + [pattern]
        if len(composed_patterns) > 1 and source_hash(composed) not in tried:
            proposals.append(self._proposal(composed, composed_patterns, found, blind))
        return proposals[:count] if count else proposals

    @staticmethod
    def _proposal(source: str, patterns: list[str], found: dict[str, dict], blind: bool) -> Proposal:
        moves = [_describe(p) if p in found else f"{_describe(p)} (tried without evidence)" if blind
                 else f"{p} configuration search (a gap no finding explains)" for p in patterns]
        return Proposal(source=source, summary="fix " + " + ".join(moves), patterns=patterns,
                        evidence=[found[p] for p in patterns if p in found])


def short_of_roofline(brief: Brief) -> bool:
    """Whether the timing shows a case short of its roofline floor (a gap to close)."""
    return any((case.get("roofline_pct") or 0.0) < ROOFLINE_GAP for case in brief.timing if case.get("time_ms"))


def fixed(pattern: str, source: str, solution_path: str, problem_path: str) -> tuple[str | None, str]:
    """(the source with ``pattern`` fixed, "") or (None, the one-line reason it does not apply).

    The source is written beside the solution it came from, so that what the fix reads relative to
    it (the problem, sibling modules) resolves as it would for the solution itself.
    """
    from ladder.diagnoser.triage.fixes import NotApplicable, apply_fix

    folder = Path(solution_path).resolve().parent
    with tempfile.NamedTemporaryFile("w", suffix=".py", prefix=".ladder-fix-", dir=folder, delete=False) as handle:
        handle.write(source)
        scratch = Path(handle.name)
    try:
        return apply_fix(pattern, scratch, problem_path), ""
    except NotApplicable as why:
        return None, str(why)
    except (SyntaxError, ValueError) as error:
        return None, f"{pattern}: the fix could not read the source ({error})"
    finally:
        scratch.unlink(missing_ok=True)


def source_hash(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()[:16]


def _describe(pattern: str) -> str:
    from ladder.diagnoser.triage.catalog import load_catalog

    entry = load_catalog().get(pattern)
    return f"{pattern} ({entry.title})" if entry else pattern
