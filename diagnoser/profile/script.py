"""Rung 2 for a script: each launch site timed by replay, placed on the roofline, the heaviest profiled.

A script that launches Triton kernels has no cases and no reference; what it has is launch sites
(one kernel launched from one line, `ladder.runner.capture.sites`). Rung 2 makes each site that carries a
share of the script's kernel time one case, so that the policy weighs the gap of a script exactly
as it weighs a KernelBench pair's (`ladder.diagnoser.gap`):

1. The driver runs the script once in a child process (its output never reaches ours), records
   every launch site with its arguments, then times each site's variants by replaying them with
   the runner's method (`ladder.diagnoser.profile.script_job`, `ladder.runner.capture.replay`). The autotuner's
   benchmarking launches are counted apart and never timed.
2. Sites become cases in the order of the time they carry (launches x replayed time) until they
   carry `CASE_SHARE` of it (at most `MAX_CASES`); the rest are listed with their time. A case's
   time, floor and class are those of the variant carrying most of the site's time: its median
   replay time, the bytes its tensor arguments span and, for a dot kernel, the flops of the GEMM
   its operands form, through `roofline.classify` (the floor is `ladder.runner.roofline.floor_seconds`).
   A variant that ran faster than that floor spans memory it does not read (a paged cache, a
   gather): its floor is unknown rather than wrong, until Nsight Compute measures its DRAM traffic
   (point 3), from which it is placed again.
3. Where Nsight Compute is present, it profiles the sites that carry most of the time (at most
   `NCU_SITES`, until `NCU_SHARE`), one replay each inside the profiler range, bounded by a launch
   count and a timeout, so any script finishes; those cases are then classed from the counters.
   The driver runs inside ncu and chooses those sites from the times it has just measured
   (`profile_in_one_run`), so the script runs once; where that run fails, it is timed in one run
   and profiled in a second, filtered to the chosen kernels.

Under the interpreter (a CPU), replays are timed on the host clock: the result says `clock: host`,
its times are the interpreter's, not a device's, and no gap is assessed from them.
"""
from __future__ import annotations

from pathlib import Path

from ladder.diagnoser.profile import ncu, nvidia, roofline
from ladder.diagnoser.profile.script_job import heaviest, site_seconds
from ladder.runner import hardware
from ladder.runner import roofline as runner_roofline

DEVICE_TIMING = {"budget_s": 0.05, "min_reps": 10, "max_reps": 100, "total_s": 20.0}
HOST_TIMING = {"budget_s": 0.02, "min_reps": 3, "max_reps": 10, "total_s": 20.0}
CASE_SHARE = 0.95
MAX_CASES = 8
NCU_SITES = 3
NCU_SHARE = 0.8
NCU_LAUNCHES = 1
SCRIPT_TIMEOUT_S = 300.0
NCU_TIMEOUT_S = 120.0
BEYOND_FLOOR = 1.05  # a variant this much faster than its floor: the arguments over-state its traffic
WARMUP_REPLAYS = 3  # runner.capture.replay: two warm-up replays and the estimate before the timed ones


class ScriptError(RuntimeError):
    """The script could not be profiled (it launched nothing, failed, or ran past its time)."""


def profile(script: str, backend: str = "cuda", *, use_ncu: bool = True, argv: list[str] | None = None,
            timeout_s: float = SCRIPT_TIMEOUT_S) -> dict:
    """Rung 2's output for a script (module docstring) on `backend` (`cuda`, or `interpret` on a CPU)."""
    timing = DEVICE_TIMING if backend == "cuda" else HOST_TIMING
    job = {"script": str(script), "argv": argv or [], "backend": backend, "time": timing}
    if backend == "cuda" and use_ncu and ncu.find_ncu():
        measured = profile_in_one_run(script, job, timeout_s)
        if measured is not None:
            return measured
    measured = measure(script, run_driver([job], timeout_s, backend), backend)
    if backend == "cuda" and use_ncu:
        attach_counters(measured, profile_sites(script, argv, measured["cases"]))
    else:
        why = "ncu not used (--no-ncu)" if backend == "cuda" else "no device: Nsight Compute needs a GPU"
        measured["ncu"] = {"available": False, "why": why}
    return measured


def profile_in_one_run(script: str, job: dict, timeout_s: float) -> dict | None:
    """Time the sites and profile the heaviest in one run of the script, inside Nsight Compute.

    The driver times every site outside the profiler range (ncu sees nothing of it: the medians
    agree with a run without ncu within 0.4% on the H200, bench/results/real-time-split), chooses
    the sites carrying most of the time from those medians and replays them inside the range. This
    saves a second run of the script (7-10 s on the H200). None when the driver did not get through
    the timing under ncu (it crashed or hung there, or ncu failed to start it): the caller then times
    and profiles in two runs, as before. A run that timed its sites and then hung in the profiler
    keeps its timing, with ncu reported unavailable.
    """
    merged = {**job, "profile": {"choose": {"sites": NCU_SITES, "share": NCU_SHARE}, "launches": NCU_LAUNCHES}}
    counters = ncu.profile_jobs([merged], None, timeout_s + NCU_TIMEOUT_S, launch_count=NCU_SITES * NCU_LAUNCHES)
    entries = counters.get("log", [])
    choice = next((e for e in entries if e.get("case") == "profile-choice"), None)
    if choice is None:
        return None
    measured = measure(script, entries, "cuda")
    if counters.get("timed_out"):  # timed, then the profiling ran past its time
        counters = {"available": False, "why": f"{counters['why']}, after the timing"}
    elif not choice["sites"]:
        counters = {"available": False, "why": "no launch site was timed, so none was chosen for ncu"}
    else:
        counters["why"] = (f"{len(choice['sites'])} launch sites carrying {choice['share']:.0%} of the kernel time, "
                           f"{NCU_LAUNCHES} replay each, in the run that timed them: " + counters["why"])
    attach_counters(measured, counters)
    return measured


def measure(script: str, entries: list[dict], backend: str) -> dict:
    """The sites' timed profile from the driver's log (ScriptError when it holds nothing to time)."""
    facts = next((e for e in entries if e.get("case") == "script"), None)
    crashed = next((e["error"] for e in entries if e.get("case") == "all" and e.get("error")), None)
    sites = [e["site"] for e in entries if e.get("case") == "site"]
    if facts is None:
        raise ScriptError(f"{Path(script).name}: {crashed or 'the profiling driver stopped before the script ran'}")
    if not sites:
        failed = f" (it failed: {facts['failed']})" if facts.get("failed") else ""
        raise ScriptError(f"{Path(script).name} launched no Triton kernel{failed}")
    clock = "events" if backend == "cuda" else "host"
    ceilings = nvidia.ceilings_for(facts["device"], None) if backend == "cuda" else {
        **runner_roofline.default_ceilings("cuda"), "source": "defaults from kb/hardware (no device here)"}
    measured = assemble(facts, sites, ceilings, clock)
    if not any(case.get("time_s") for case in measured["cases"]):
        # Nothing measured is no profile: the rung fails and says why, rather than reporting empty cases.
        why = (f"the script failed ({facts['failed']})" if facts.get("failed") else
               measured["cases"][0].get("why", "no launch was timed"))
        raise ScriptError(f"{Path(script).name}: no launch of its {len(sites)} site(s) could be timed: {why}")
    return measured


def run_driver(jobs: list[dict], timeout_s: float, backend: str) -> list[dict]:
    """Run the driver on `jobs` in a child process (no profiler) and return its log."""
    output, returncode, entries = ncu.run_driver_alone(jobs, timeout_s, interpret=backend == "interpret")
    if output is None:
        raise ScriptError(f"the script did not finish within {timeout_s:.0f} s (its launches so far are lost)")
    if returncode != 0 and not any(e.get("case") == "site" for e in entries):
        tail = [line for line in output.strip().splitlines() if line.strip()][-1:] or [f"status {returncode}"]
        raise ScriptError(f"the profiling driver failed: {tail[0][:300]}")
    return entries


def assemble(facts: dict, sites: list[dict], ceilings: dict, clock: str) -> dict:
    """The profile of a script from its driver log: one case per site that carries time (see module)."""
    carried = {site["key"]: site_seconds(site) for site in sites}
    total = sum(seconds for seconds, _ in carried.values() if seconds) or None
    ranked = sorted(sites, key=lambda site: -(carried[site["key"]][0] or 0.0))
    cases, minor, share = [], [], 0.0
    for site in ranked:
        seconds, estimated = carried[site["key"]]
        if len(cases) < MAX_CASES and (not cases or share < CASE_SHARE or seconds is None):
            cases.append(site_case(len(cases), site, ceilings, seconds, total, estimated))
            share += (seconds or 0.0) / total if total else 0.0
        else:
            minor.append({"site": _where(site), "kernel": site["kernel"], "launches": site["launches"],
                          "seconds": seconds, "share": seconds / total if seconds and total else None})
    note = ("script: each launch site replayed with its own arguments, timed with device events, L2 flushed, "
            "median" if clock == "events" else
            "host-timed under Triton's interpreter: the times are the interpreter's on this CPU, not a "
            "device's, so no gap to the roofline is assessed from them")
    return {"backend": "cuda" if clock == "events" else "interpret", "device": facts.get("device"), "mode": "script",
            "clock": clock, "ceilings": ceilings, "correct": None, "rejected": None, "cases": cases,
            "minor_sites": minor, "kernel_seconds": total, "note": note,
            "steady_state": {"script_runs": 1, "script_seconds": facts.get("script_s"),
                             "launches": facts.get("launches"),
                             "autotuning_launches_excluded": facts.get("tuning_launches", 0),
                             "untracked_launches": facts.get("untracked_launches", 0),
                             "warmup_replays_per_variant": WARMUP_REPLAYS,
                             **({"script_failed": facts["failed"]} if facts.get("failed") else {})}}


def site_case(index: int, site: dict, ceilings: dict, seconds: float | None, total: float | None,
              estimated: bool) -> dict:
    """One site as a rung-2 case: placed by the variant carrying most of its time."""
    timed = [v for v in site["variants"] if v.get("time_ms")]
    main = max(timed, key=lambda v: v["launches"] * v["time_ms"]["median"]) if timed else None
    out = {"case": index, "params": _params(site, main), "kernels": [site["kernel"]], "launches": 1,
           "site": {"key": site["key"], "file": site["file"], "line": site["line"], "kernel_file": site["kernel_file"],
                    "kernel_line": site["kernel_line"], "launches": site["launches"], "seconds": seconds,
                    "share": seconds / total if seconds and total else None, "estimated": estimated,
                    "variants": [_variant_summary(v) for v in site["variants"]],
                    "other_launches": site.get("other_launches", 0)},
           "steady_state": {"launches_in_script": site["launches"], "warmup_replays": WARMUP_REPLAYS,
                            "excluded_launches": {"autotuning": site.get("tuning_launches", 0)}}}
    if main is None:
        reasons = sorted({v.get("not_timed", "not timed") for v in site["variants"]}) or ["no variant held"]
        return {**out, "why": f"not timed: {reasons[0]}"}
    time_s = main["time_ms"]["median"] / 1e3
    flops, bytes_moved = main.get("flops") or 0.0, main.get("bytes") or 0.0
    # tl.dot on float32 operands runs in tf32 unless told otherwise: that peak is the floor's
    peak = runner_roofline.peak_flops(ceilings, main.get("dtype") or "float32", allow_tf32=True)
    placed = roofline.classify(time_s, flops, bytes_moved, {"bandwidth": ceilings["bandwidth"], "flops": peak}, 1)
    if main["time_ms"].get("clock") == "host":  # the interpreter's time: say so wherever the class is read
        placed.update(util_source="host clock", why=placed["why"].replace("(events)", "(host clock, interpreter)"))
    out.update(placed)
    out.update({"time_s": time_s, "spread_s": (main["time_ms"].get("iqr") or 0) / 1e3, "clock": main["time_ms"].get("clock"),
                "flops": flops or None, "bytes": bytes_moved or None, "ceiling_flops": peak, "dtype": main.get("dtype"),
                "bytes_source": "the memory its tensor arguments span, each region once",
                "flops_source": (f"a dot: {main['flops_from']}" if main.get("flops_from") else
                                 "none counted (no dot, or no GEMM its operands' shapes form): the floor is the bytes'"),
                "occupancy": nvidia.occupancy_from(None)})
    _beyond_floor(out)
    return out


def _beyond_floor(case: dict) -> None:
    """A time under the floor means the floor over-states the work: say so and leave the gap unknown."""
    if case.get("efficiency") and case["efficiency"] > BEYOND_FLOOR:
        case["floor_note"] = (f"ran in {case['efficiency']:.1f}x less than the floor its arguments give: it reads only"
                              " part of the memory they span, so its floor and gap are unknown")
        case["efficiency"] = None


def _floor_from_traffic(case: dict, ceilings: dict, counters: dict) -> None:
    """A site whose arguments span memory it never touched is placed again from the DRAM traffic
    Nsight Compute measured: an embedding gather reads the rows it is asked for, not the whole table;
    vLLM's cache write fills the slots it is given, not the whole cache. Such a site shows it either by
    beating the floor of what its arguments span or by moving less than they span by more than the
    L2 could have held back (written lines still dirty in it when the kernel ended). The traffic is
    a floor that cannot show traffic beyond what the kernel needed, but a gap that says how far it
    runs from moving what it did move at full bandwidth."""
    spanned, traffic = case.get("bytes") or 0.0, counters.get("dram_bytes") or 0.0
    if not (case.get("efficiency") and 0 < traffic < spanned):
        return
    if not (case["efficiency"] > BEYOND_FLOOR or spanned - traffic > _largest_l2_bytes()):
        return
    case.update(_placed_with_counters(case, traffic, ceilings, counters), bytes=traffic, spanned_bytes=spanned,
                bytes_source=(f"the DRAM traffic Nsight Compute measured ({traffic / 2**20:.1f} MiB): its arguments "
                              f"span {spanned / 2**20:.0f} MiB, more than it reads or writes, so the floor is the "
                              "traffic it made and cannot show traffic beyond what it needed"))
    case.pop("floor_note", None)


def _largest_l2_bytes() -> float:
    """The most an NVIDIA part in ladder's tables can keep in its L2 (the H200's 60 MB): lines a kernel
    wrote and the L2 still holds when it ends never show in its DRAM traffic."""
    return max(table.get("l2_bytes") or 0 for table in hardware.tables().values() if table.get("vendor") == "nvidia")


def profile_sites(script: str, argv: list[str] | None, cases: list[dict]) -> dict:
    """Nsight Compute over the cases carrying most of the time, in a run of its own (module docstring, point 3)."""
    chosen, share = heaviest([(case["site"]["share"], {**case["site"], "kernel": case["kernels"][0]})
                              for case in cases if case.get("time_s")], NCU_SITES, NCU_SHARE)
    if not chosen:
        return {"available": False, "why": "no launch site was timed, so none was chosen for ncu", "cases": {}, "errors": {}}
    job = {"script": str(script), "argv": argv or [], "backend": "cuda",
           "profile": {"sites": [{"key": c["key"], "variant": c["variant"]} for c in chosen], "launches": NCU_LAUNCHES}}
    counters = ncu.profile_jobs([job], sorted({c["kernel"] for c in chosen}), NCU_TIMEOUT_S,
                                launch_count=len(chosen) * NCU_LAUNCHES)
    counters["why"] = (f"{len(chosen)} launch sites carrying {share:.0%} of the kernel time, {NCU_LAUNCHES} replay each: "
                       + counters["why"])
    return counters


def _placed_with_counters(case: dict, bytes_moved: float, ceilings: dict, counters: dict) -> dict:
    """The case's roofline class and numbers read from its ncu counters, its floor from `bytes_moved`."""
    return roofline.classify(case["time_s"], case["flops"] or 0.0, bytes_moved,
                             {"bandwidth": ceilings["bandwidth"], "flops": case["ceiling_flops"]}, 1, counters)


def attach_counters(profile_output: dict, counters: dict) -> None:
    """Each profiled site's counters into its case, and its class read from them."""
    ceilings = profile_output["ceilings"]
    for case in profile_output["cases"]:
        launches = counters.get("cases", {}).get((0, f"site:{case['site']['key']}"))
        aggregated = roofline.aggregate(launches or [])
        if aggregated is None or not case.get("time_s"):
            continue
        case.update(_placed_with_counters(case, case["bytes"] or 0.0, ceilings, aggregated))
        _floor_from_traffic(case, ceilings, aggregated)
        _beyond_floor(case)
        case["ncu"] = nvidia.counters_summary(launches, aggregated)
        case["occupancy"] = nvidia.occupancy_from(aggregated)
    errors = "; ".join(f"{key[1]}: {error}" for key, error in counters.get("errors", {}).items())
    profile_output["ncu"] = {"available": counters["available"], "why": counters["why"] + (f"; {errors}" if errors else "")}


def _where(site: dict) -> str:
    return f"{Path(site['file']).name if site.get('file') else '?'}:{site.get('line') or '?'}"


def _params(site: dict, variant: dict | None) -> dict:
    """What the report's table shows of a site: where, what, how often, and the deciding shapes."""
    params = {"site": _where(site), "kernel": site["kernel"], "launches": site["launches"]}
    if variant is not None:
        shapes = [f"{a['name']} {'x'.join(map(str, a['shape']))} {a['dtype']}" for a in variant["arguments"] if "shape" in a]
        params["args"] = ", ".join(shapes)
        if variant.get("grid"):
            params["grid"] = "x".join(map(str, variant["grid"]))
    return params


def _variant_summary(variant: dict) -> dict:
    summary = {key: variant.get(key) for key in ("key", "launches", "grid", "bytes", "flops", "flops_from", "dtype",
                                                 "arguments")}
    if variant.get("time_ms"):
        summary["time_ms"] = variant["time_ms"]
    else:
        summary["not_timed"] = variant.get("not_timed")
    return summary
