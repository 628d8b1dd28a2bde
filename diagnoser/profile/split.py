"""Where a forward of several kernels spends its time: each of its kernels timed by replay.

The runner times a forward whole, so for a forward that launches several kernels the gap to the
roofline says how far the forward is from its floor, never which kernel to work on: a GEMM at 90%
of its own floor beside an epilogue kernel at 20% of its own reads as one forward at 60%. For the
case furthest from its floor, the profiling driver (`ladder.diagnoser.profile.driver`, a child
process) warms the forward up to its steady state, records one more call by launch site and times
each site by replay with the method of a script's rung 2 (`ladder.diagnoser.profile.script`:
device events, L2 flushed, median). Each kernel then has its time per forward, its share of the
forward and its own roofline position, from the bytes its tensor arguments span and the GEMM its
operands form. What no Triton kernel accounts for (torch ops between them, launch gaps) is the
forward's time less theirs.

Each kernel is timed alone with a cold L2; kernels that hand data to each other through L2 can
then sum to more than the forward, and the shares are of that sum, which the split says.
"""
from __future__ import annotations

import time

from ladder.diagnoser.profile import ncu, script
from ladder.diagnoser.profile.script_job import site_seconds
from ladder.runner.errors import one_line

SPLIT_TIMEOUT_S = 120.0


def worst_multi_kernel_case(cases: list[dict]) -> dict | None:
    """The timed case of more than one launch per forward that is furthest from its floor."""
    several = [c for c in cases if c.get("time_s") and (c.get("launches") or 0) > 1]
    if not several:
        return None
    return min(several, key=lambda c: (c.get("efficiency") if c.get("efficiency") is not None else 1.0,
                                       -c["time_s"]))


def attach_split(profile_output: dict, solution: str, problem: str, device: str = "cuda",
                 timeout_s: float = SPLIT_TIMEOUT_S) -> None:
    """`profile_output["split"]`: the worst multi-kernel case split into its kernels (module docstring).

    Nothing is added when every case launches one kernel; a split that failed says why under
    `error` and leaves the rest of the profile as it was.
    """
    case = worst_multi_kernel_case(profile_output.get("cases", []))
    if case is None:
        return
    started = time.perf_counter()
    try:
        sites = measure(solution, problem, case["case"], device, timeout_s)
        profile_output["split"] = split_of(case, sites, profile_output["ceilings"],
                                           "events" if device == "cuda" else "host")
    except Exception as error:  # noqa: BLE001 (the split adds to rung 2: whatever breaks it must not lose the rest)
        profile_output["split"] = {"case": case["case"], "error": str(error) if isinstance(error, SplitError)
                                   else one_line(error)}
    profile_output["split"]["seconds"] = round(time.perf_counter() - started, 2)


class SplitError(RuntimeError):
    """The forward could not be split (the driver failed, timed out, or recorded nothing)."""


def measure(solution: str, problem: str, case_index: int, device: str, timeout_s: float) -> list[dict]:
    """The driver's launch sites of one steady-state forward of the case, each timed by replay."""
    timing = script.DEVICE_TIMING if device == "cuda" else script.HOST_TIMING
    job = {"solution": str(solution), "problem": str(problem), "cases": [case_index], "device": device,
           "split": timing}
    output, _, entries = ncu.run_driver_alone([job], timeout_s, interpret=device != "cuda")
    if output is None:
        raise SplitError(f"splitting the forward took longer than {timeout_s:.0f} s")
    entry = next((e for e in entries if e.get("case") == case_index), None)
    if entry is None or entry.get("error"):
        why = (entry or {}).get("error") or next((e["error"] for e in entries if e.get("error")), None)
        raise SplitError(f"the forward could not be split: {why or 'the driver stopped before the case ran'}")
    if not entry.get("split"):
        raise SplitError("the recorded forward launched no Triton kernel")
    return entry["split"]


def split_of(case: dict, sites: list[dict], ceilings: dict, clock: str) -> dict:
    """The split of one case from its timed sites: each kernel's time, share and roofline position."""
    from ladder.runner.problem import case_label

    kernels = []
    for index, site in enumerate(sites):
        seconds, estimated = site_seconds(site)
        placed = script.site_case(index, site, ceilings, seconds, None, estimated)
        kernels.append({"kernel": site["kernel"], "file": site.get("file"), "line": site.get("line"),
                        "launches": site["launches"], "seconds": seconds, "estimated": estimated,
                        **{key: placed.get(key) for key in ("floor_s", "efficiency", "class", "why", "bytes",
                                                            "flops", "floor_note")}})
    kernels.sort(key=lambda k: -(k["seconds"] or 0.0))
    forward_s, kernels_s = case["time_s"], sum(k["seconds"] or 0.0 for k in kernels)
    whole = max(forward_s, kernels_s)
    for kernel in kernels:
        kernel["share"] = kernel["seconds"] / whole if kernel["seconds"] else None
    note = ("each kernel replayed alone with its own arguments, " +
            ("device events, L2 flushed, median" if clock == "events" else
             "host-timed under Triton's interpreter (the interpreter's times, not a device's)"))
    if kernels_s > forward_s:
        note += ("; alone they take longer than the forward (on a device each replay starts with a cold L2, "
                 "which the forward's kernels share), so the shares are of their sum")
    return {"case": case["case"], "label": case_label(case.get("params") or {}), "clock": clock,
            "forward_s": forward_s, "kernels_s": kernels_s, "outside_s": max(0.0, forward_s - kernels_s),
            "outside_share": max(0.0, forward_s - kernels_s) / whole, "kernels": kernels, "note": note}
