"""When do the findings so far *explain* the gap between a kernel's measured time and its roofline floor?

The ladder climbs only while they do not. "Explain" is defined per measured case:

* a case **needs no explanation** when it runs at `AT_ROOFLINE` (80%) of its floor or better
  (floor / measured >= 0.8): what is left is within what real kernels reach on real hardware;
* otherwise the case **is explained** when at least one finding with confidence >= `CONFIDENT`
  (0.7: a source-level guess that the IR has not confirmed usually sits below it) names a cause
  that produces the case's measured roofline class (rung 2): a memory-bound case
  needs a cause that wastes or serialises memory traffic, a latency-bound one a cause that starves
  the GPU of parallelism or stalls it, a compute-bound one a cause that wastes compute (no tensor
  cores, the old MMA), a launch-bound one a cause that adds launches or shrinks their work.
  Findings tied to a kernel only explain cases in which that kernel runs, and findings whose
  evidence names the cases they were seen in only those (`_holds_on`). A latency-bound class
  read from events alone (no counters) may also hide traffic beyond the compulsory bytes, so a
  memory cause explains it too (`classes_to_explain`). A fixed launch
  configuration (nv.hardcoded-config) explains nothing by itself: it is a missed opportunity
  whose cost shows up as one of the specific causes (tiny blocks, a small grid, spills...);
* the **gap is explained** when every measured case is (needs no explanation or is explained).

Without a measurement (no device, or rung 2 failed) the gap is unknown, hence not explained: the
ladder then climbs every rung it can. So is a measurement on the host clock (a script's launches
replayed under the interpreter, `clock: host`): it says what the interpreter took, not a device.
A script's cases are its launch sites (`ladder.diagnoser.profile.script`), weighed like a pair's cases; the
worst of them is the one that loses the most time (`worst_case`). The cause table below maps each catalog id (and, for
findings that carry no catalog id, the kind of the IR fact they cite) to the classes it explains.
"""
from __future__ import annotations

from ladder.diagnoser.evidence import fact_of
from ladder.diagnoser.triage.detectors.common import case_label

AT_ROOFLINE = 0.8
CONFIDENT = 0.7

MEMORY, COMPUTE, LATENCY, LAUNCH = "memory-bound", "compute-bound", "latency-bound", "launch-bound"

CAUSES: dict[str, frozenset[str]] = {
    # NVIDIA catalog
    "nv.scalar-access": frozenset({MEMORY, LATENCY}),
    "nv.strided-inner-axis": frozenset({MEMORY, LATENCY}),
    "nv.register-spill": frozenset({MEMORY, LATENCY}),
    "nv.oversized-block": frozenset({LATENCY, MEMORY}),
    "nv.tiny-block": frozenset({LATENCY, LAUNCH}),
    "nv.no-tensor-core": frozenset({COMPUTE, LATENCY}),
    "nv.mma-v2-on-hopper": frozenset({COMPUTE, LATENCY}),
    "nv.unpipelined-loop": frozenset({LATENCY, MEMORY}),
    "nv.smem-limits-occupancy": frozenset({LATENCY}),
    "nv.hot-layout-conversion": frozenset({LATENCY, COMPUTE}),
    "nv.loop-carried-reduction": frozenset({LATENCY, COMPUTE}),
    "nv.gemm-no-grouped-order": frozenset({MEMORY, LATENCY}),
    "nv.small-grid": frozenset({LATENCY, LAUNCH}),
    "nv.launch-bound": frozenset({LAUNCH}),
    "nv.atomic-contention": frozenset({LATENCY, MEMORY}),
    "nv.unfused-epilogue": frozenset({MEMORY, LAUNCH}),
    "nv.redundant-global-traffic": frozenset({MEMORY}),
    "nv.hardcoded-config": frozenset(),
    "nv.index-div-mod": frozenset({COMPUTE, LATENCY}),
    "nv.int64-index": frozenset({COMPUTE, LATENCY}),
    "nv.tile-misfit": frozenset({LATENCY, MEMORY}),   # operands starve the tensor cores: L2 busy, SMs waiting
    "nv.sfu-bound-loop": frozenset({COMPUTE, LATENCY}),  # tensor cores idle while the MUFU works
    "nv.short-k-loop": frozenset({COMPUTE, LATENCY}),    # tensor cores idle during each tile's fill and epilogue
    # Ascend catalog (classes from msprof's pipelines: MTE = memory, vector/cube = compute, scalar = latency)
    "npu.grid-exceeds-cores": frozenset({LAUNCH, LATENCY}),
    "npu.ub-overflow": frozenset({MEMORY, LATENCY}),
    "npu.unaligned-tail-axis": frozenset({MEMORY}),
    "npu.int64-scalar-fallback": frozenset({LATENCY, COMPUTE}),
    "npu.discrete-access": frozenset({MEMORY, LATENCY}),
    "npu.masked-load-fill": frozenset({MEMORY, LATENCY}),
    "npu.where-condition-dtype": frozenset({LATENCY, COMPUTE}),
    "npu.no-multibuffer-overlap": frozenset({MEMORY, LATENCY}),
}

# For findings without a catalog id: the IR fact they rest on.
FACT_CAUSES: dict[str, frozenset[str]] = {
    "global_access": frozenset({MEMORY, LATENCY}),
    "spill": frozenset({MEMORY, LATENCY}),
    "convert_layout": frozenset({LATENCY, COMPUTE}),
    "dot_lowering": frozenset({COMPUTE, LATENCY}),
    "pipelining": frozenset({LATENCY, MEMORY}),
    "barrier_in_loop": frozenset({LATENCY}),
    "resources": frozenset({LATENCY}),
    "occupancy": frozenset({LATENCY}),
    "int64_index": frozenset({COMPUTE, LATENCY}),
    "divrem_in_loop": frozenset({COMPUTE, LATENCY}),
    "atomic": frozenset({LATENCY, MEMORY}),
    "reduction_in_loop": frozenset({LATENCY, COMPUTE}),
    "launch": frozenset({LAUNCH, LATENCY}),
    "discrete_access": frozenset({MEMORY, LATENCY}),
    "masked_load_fill": frozenset({MEMORY, LATENCY}),
    "int64_arith": frozenset({LATENCY, COMPUTE}),
    "int_compare": frozenset({LATENCY, COMPUTE}),
    "ub_usage": frozenset({MEMORY, LATENCY}),
    "unaligned_tail": frozenset({MEMORY}),
    "core_mode": frozenset({COMPUTE}),
}


def causes_of(finding: dict) -> frozenset[str]:
    """The roofline classes a finding (as a dict) can account for."""
    if finding.get("pattern") in CAUSES:
        return CAUSES[finding["pattern"]]
    kinds = [fact_of(e)["kind"] for e in finding.get("evidence", []) if e.get("type") == "fact"]
    return frozenset().union(*(FACT_CAUSES.get(k, frozenset()) for k in kinds)) if kinds else frozenset()


def classes_to_explain(case: dict) -> frozenset[str]:
    """The classes a finding may name to explain `case`.

    Events alone see only the compulsory bytes: a kernel that moves more than those (re-reads,
    spills, wide strides) shows low memory throughput and is classed latency-bound. Without
    counters that class is ambiguous, so a cause of memory traffic explains it too.
    """
    if case.get("class") == LATENCY and case.get("util_source") == "events":
        return frozenset({LATENCY, MEMORY})
    return frozenset({case.get("class")})


def worst_case(cases: list[dict]) -> dict | None:
    """The measured case a report leads with.

    A script's cases are the launch sites of one forward, whose times add up: the one that loses the
    most time to its floor leads (FlagGems' argmax: the 49 us main pass at 45% of its floor, not the
    4.5 us second pass at 0.1%, a launch that cannot get much faster). A problem's cases are its sizes,
    each counted once: the one furthest below its floor leads.
    """
    measured = [c for c in cases if c.get("efficiency") is not None]
    if not measured:
        return None
    if all(c.get("site") and c.get("time_s") is not None and c.get("floor_s") is not None for c in measured):
        return max(measured, key=lambda c: (c["time_s"] - c["floor_s"], -c["efficiency"]))
    return min(measured, key=lambda c: c["efficiency"])


def _explains(finding: dict, case: dict) -> bool:
    if finding.get("confidence", 0) < CONFIDENT or not classes_to_explain(case) & causes_of(finding):
        return False
    kernels = case.get("kernels")
    return (not finding.get("kernel") or not kernels or finding["kernel"] in kernels) and _holds_on(finding, case)


def _holds_on(finding: dict, case: dict) -> bool:
    """A check that judges each size and names the cases it saw a pattern in (an atomic's
    contention, a misaligned row, a reduction's trip count) did not see it in the others, so its
    finding explains only the cases it names. Evidence that names no case (an IR fact, a kernel-wide
    metric) holds on every case, and so does any finding on a case without sizes (a script's
    launch site)."""
    params = case.get("params")
    named = [set(item.get("cases") or []) for item in finding.get("evidence", [])]
    if params is None or not named or not all(named):
        return True
    return case_label(params) in set().union(*named)


def assess(profile: dict | None, findings: list[dict]) -> dict:
    """{explained: bool, why: one line, cases: [{case, efficiency, class, explained_by, status}]}."""
    if (profile or {}).get("clock") == "host":
        why = ("the gap is unknown: rung 2 timed on the host clock under the interpreter, and those times"
               " are not a device's")
        return {"explained": False, "why": why, "cases": []}
    cases = [c for c in (profile or {}).get("cases", []) if c.get("efficiency") is not None]
    if not cases:
        why = "the gap is unknown: no case was measured against the roofline"
        return {"explained": False, "why": why, "cases": []}
    verdicts = []
    for case in cases:
        if case["efficiency"] >= AT_ROOFLINE:
            verdicts.append({"case": case["case"], "efficiency": case["efficiency"], "class": case.get("class"),
                             "status": "at-roofline", "explained_by": []})
            continue
        by = sorted({f.get("pattern") or f.get("title", "?") for f in findings if _explains(f, case)})
        verdicts.append({"case": case["case"], "efficiency": case["efficiency"], "class": case.get("class"),
                         "status": "explained" if by else "unexplained", "explained_by": by})
    open_cases = [v for v in verdicts if v["status"] == "unexplained"]
    if not open_cases:
        if all(v["status"] == "at-roofline" for v in verdicts):
            why = f"every case runs at {AT_ROOFLINE:.0%} of its roofline floor or better: nothing to explain"
        else:
            causes = sorted({c for v in verdicts for c in v["explained_by"]})
            why = "the findings explain every case's gap to the roofline (" + ", ".join(causes) + ")"
        return {"explained": True, "why": why, "cases": verdicts}
    open_ids = {v["case"] for v in open_cases}
    worst_id = worst_case([c for c in cases if c["case"] in open_ids])["case"]
    worst = next(v for v in open_cases if v["case"] == worst_id)
    why = (f"{len(open_cases)} of {len(verdicts)} cases unexplained; worst: case {worst['case']} at"
           f" {worst['efficiency']:.0%} of its floor, {worst['class']}, and no finding accounts for that")
    return {"explained": False, "why": why + _where_in_the_split(profile, worst["case"]), "cases": verdicts}


def _where_in_the_split(profile: dict, case: int) -> str:
    """The kernel of a multi-kernel forward that loses the most time to its own floor, when rung 2
    split that case into its kernels (`ladder.diagnoser.profile.split`)."""
    split = profile.get("split") or {}
    kernels = [k for k in split.get("kernels", []) if k.get("seconds") and k.get("efficiency") is not None]
    if split.get("case") != case or not kernels:
        return ""
    kernel = max(kernels, key=lambda k: k["seconds"] * (1.0 - min(k["efficiency"], 1.0)))
    where = f" (line {kernel['line']})" if kernel.get("line") else ""
    return (f"; most of it is lost in {kernel['kernel']}{where}, {kernel['share']:.0%} of the forward"
            f" at {kernel['efficiency']:.0%} of its own floor")
