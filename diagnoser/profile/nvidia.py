"""Rung 2 on NVIDIA GPUs: per case, time and roofline position from the runner, counters from ncu.

1. The runner benches the solution (`ladder.runner.bench`: correctness, then event timing with L2 flushes,
   interleaved with the PyTorch reference), which also names the Triton kernels each case launches.
2. The device's ceilings come from the runner's per-device cache; if there is none yet they are
   measured now (`python -m ladder.runner.roofline`, a copy and large matmuls) and cached.
3. Nsight Compute profiles one warmed-up forward per case over the driver, filtered to those
   kernels; without ncu the report says why and the class rests on events alone.
4. Each case is classified (`roofline.classify`); theoretical occupancy is filled in from rung 3's
   occupancy facts once that rung has run (`attach_occupancy`).
5. Where a case launches several kernels, the one furthest from its floor is split into its
   kernels, each timed by replay (`ladder.diagnoser.profile.split`, attached by `profile.profile`
   and by the optimization loop): which kernel the gap is in.

Launches per forward are the steady state's: the runner counts them on the timed calls, made after
the checked calls and the timing warm-up, and never counts the launches an autotuner makes while it
times its configs (`ladder.runner.capture.tuning`); each case's `steady_state` says how many warm-up calls
came first and what was left out, and a launch-bound class says it in its reason.
A script has no cases: its launch sites are timed by replay (`ladder.diagnoser.profile.script`).
"""
from __future__ import annotations

import subprocess
import sys

from ladder.diagnoser.profile import ncu, roofline
from ladder.runner import roofline as runner_roofline

# Lighter than `ladder bench`: one fresh seed per case for correctness (the gate's full check is
# `ladder bench`'s job), and a short timing budget; still at least 20 verified repetitions. The
# kernel is under diagnosis, not judged: a forward that finishes in torch (an unfused epilogue) or
# trips a static rule is still timed, and what the guards saw is on each case (`guard_notes`).
BENCH_OPTIONS = {"seeds": 1, "budget_s": 0.2, "min_reps": 20, "max_reps": 200, "static_checks": False,
                 "guards": "report"}


def ceilings_for(device: str, cached: dict | None) -> dict:
    """The runner's ceilings record for the device, measured now (and cached) if it has none yet."""
    found = cached or runner_roofline.load_ceilings(device)
    if found.get("source") == "defaults":
        measured = subprocess.run([sys.executable, "-m", "ladder.runner.roofline", "cuda"], cwd=ncu.REPO,
                                  capture_output=True, text=True, timeout=300)
        if measured.returncode == 0:
            found = runner_roofline.load_ceilings(device)
    source = ("measured on this device, cached at " + found["source"] if found.get("source") != "defaults"
              else "defaults from kb/hardware (measuring the device failed)")
    return {**found, "source": source, "device": found.get("device", device)}


def bench(solution: str, problem: str, backend: str = "cuda", isolate: bool = True) -> dict:
    """The runner's flat record of the solution (correctness, then interleaved event timing).

    `isolate=False` evaluates in this process (no worker start per kernel), as `ladder suite` does
    for the suite's own, trusted solutions.
    """
    from ladder.runner.bench import bench_pair

    return bench_pair(solution, problem, backend=backend, isolate=isolate, **BENCH_OPTIONS)


def launched_kernels(record: dict) -> list[str]:
    """The Triton kernels the runner saw the forward launch, over all cases (ncu's name filter)."""
    return sorted({k for case in record["cases"] for k in case.get("kernels") or []})


def assemble(record: dict, ceilings: dict, counters: dict, job: int = 0) -> dict:
    """Rung 2's output from a bench record and ncu counters (those of `job` in a batched ncu run)."""
    if record["rejected"] and not any(c.get("time_ms") for c in record["cases"]):
        raise RuntimeError(f"the runner rejected the solution ({record['rejected']['stage']}: "
                           f"{record['rejected']['reason']}): nothing to profile")
    mine = {case: launches for (j, case), launches in counters["cases"].items() if j == job}
    cases = [_case(case, ceilings, mine.get(case["case"], [])) for case in record["cases"]]
    errors = [f"case {case}: {error}" for (j, case), error in counters.get("errors", {}).items() if j == job]
    return {
        "backend": "cuda", "device": record["device"], "ceilings": ceilings,
        "ncu": {"available": counters["available"], "why": counters["why"] + (f"; {'; '.join(errors)}" if errors else "")},
        "correct": record["ok"], "rejected": record["rejected"], "cases": cases,
    }


def profile(solution: str, problem: str, *, use_ncu: bool = True, ncu_timeout: float = 300.0) -> dict:
    """Rung 2's output for a solution/problem pair on the current CUDA device."""
    record = bench(solution, problem)
    ceilings = ceilings_for(record["device"], None)
    if use_ncu:
        counters = ncu.profile_jobs([{"solution": solution, "problem": problem}], launched_kernels(record), ncu_timeout)
    else:
        counters = {"available": False, "why": "ncu not used (--no-ncu)", "cases": {}, "errors": {}}
    return assemble(record, ceilings, counters)


def _case(case: dict, ceilings: dict, launch_counters: list[dict]) -> dict:
    out = {"case": case["case"], "params": case.get("params", {}), "correct": case.get("correct"),
           "reason": case.get("reason"), "kernels": case.get("kernels") or [], "launches": case.get("launches"),
           "guard_notes": case.get("notes") or []}
    timing = case.get("time_ms")
    if not timing:
        return {**out, "why": f"not timed: {case.get('reason') or 'no timing'}"}
    aggregated = roofline.aggregate(launch_counters)
    flops, bytes_moved = case.get("flops") or 0.0, case.get("bytes") or 0.0
    peak = runner_roofline.peak_flops(ceilings, case.get("compute_dtype"), case.get("allow_tf32"))
    time_s = timing["median"] / 1e3
    placed = roofline.classify(time_s, flops, bytes_moved, {"bandwidth": ceilings["bandwidth"], "flops": peak},
                               case.get("launches") or 1, aggregated)
    if placed["class"] == "launch-bound":
        placed["why"] += "; " + counted(steady_state(case))
    out.update(placed)
    out.update({
        "time_s": time_s, "spread_s": (timing.get("iqr") or 0) / 1e3,
        "ref_time_s": case["reference_ms"] / 1e3 if case.get("reference_ms") else None,
        "speedup_vs_reference": case.get("speedup"), "flops": flops or None, "bytes": bytes_moved or None,
        "ceiling_flops": peak, "dtype": case.get("compute_dtype"), "occupancy": occupancy_from(aggregated),
        "steady_state": steady_state(case),
    })
    if aggregated:
        out["ncu"] = counters_summary(launch_counters, aggregated)
    return out


def counters_summary(launch_counters: list[dict], aggregated: dict) -> dict:
    """What a case shows of its ncu counters: the aggregate, each launch, the top stalls, conflicts."""
    stalls = [s for c in launch_counters for s in c.get("top_stalls", [])]
    return {**aggregated, "launches": launch_counters,
            "top_stalls": sorted(stalls, key=lambda s: -s["warps_per_issue"])[:3], **_conflicts(launch_counters)}


def occupancy_from(aggregated: dict | None) -> dict:
    """A case's occupancy: theoretical from rung 3 later (`attach_occupancy`), the rest from ncu."""
    return {"theoretical": None, "theoretical_ncu": _fraction(aggregated, "theoretical_occupancy_pct"),
            "achieved": _fraction(aggregated, "achieved_occupancy_pct")}


def steady_state(case: dict) -> dict:
    """How the case's launches per forward were counted: on which calls, after how many warm-up
    calls, and what was left out (the autotuner's benchmarking, and what only the first call launched)."""
    counts = case.get("launch_counts") or {}
    first, steady = counts.get("first_call"), case.get("launches")
    return {"launches_per_forward": steady, "counted_on": counts.get("source"),
            "warmup_calls": counts.get("warmup_calls"),
            "excluded_launches": {"autotuning": counts.get("autotuning_excluded"),
                                  "first_call_only": max(first - steady, 0) if first is not None and steady is not None
                                  else None},
            **({"varying": counts["varying"]} if counts.get("varying") else {})}


def counted(steady: dict) -> str:
    """How a launch count was reached, in words, for the rule that rests on it."""
    excluded = steady.get("excluded_launches") or {}
    left_out = [f"{n} {what}" for what, n in (("autotuning", excluded.get("autotuning")),
                                             ("first-call-only", excluded.get("first_call_only"))) if n]
    return (f"{steady.get('launches_per_forward')} launches per forward counted on the {steady.get('counted_on') or 'checked calls'}"
            f" after {steady.get('warmup_calls') or 0} warm-up calls"
            + (f" ({', '.join(left_out)} launches left out)" if left_out else ""))


def _fraction(aggregated: dict | None, key: str) -> float | None:
    value = (aggregated or {}).get(key)
    return None if value is None else value / 100.0


def _conflicts(launch_counters: list[dict]) -> dict:
    """Shared-memory bank conflicts over the forward: conflicted share of all wavefronts, ld and st."""
    out = {}
    for op in ("ld", "st"):
        conflicts = sum(c["memory"].get(f"smem_{op}_bank_conflicts") or 0 for c in launch_counters)
        wavefronts = sum(c["memory"].get(f"smem_{op}_wavefronts") or 0 for c in launch_counters)
        out[f"smem_{op}_conflict_pct"] = 100.0 * conflicts / wavefronts if wavefronts else None
    return out


def attach_occupancy(profile_output: dict, facts: list[dict]) -> None:
    """Fill each case's theoretical occupancy from rung 3's `occupancy` facts (lowest of its kernels)."""
    by_kernel: dict[str, float] = {}
    for fact in facts:
        if fact.get("kind") == "occupancy" and isinstance(fact.get("value"), dict):
            name = (fact.get("kernel") or "").split("[", 1)[0]
            value = fact["value"].get("occupancy")
            if value is not None:
                by_kernel[name] = min(value, by_kernel.get(name, 1.0))
    for case in profile_output.get("cases", []):
        values = [by_kernel[k] for k in case.get("kernels", []) if k in by_kernel]
        if values and "occupancy" in case:
            case["occupancy"]["theoretical"] = min(values)
