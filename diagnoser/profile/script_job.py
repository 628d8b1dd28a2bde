"""The driver's script job: run a script once, recording its launch sites, then replay them.

    {"script": path, "argv": [...], "backend": "cuda" | "interpret",
     "time": {"budget_s", "min_reps", "max_reps", "total_s"} | null,
     "profile": {"sites": [{"key", "variant"}], "launches": n} | null}

1. The script runs as `__main__` under `ladder.runner.capture.sites.SiteRecorder`: every launch is counted
   by its site, the autotuner's benchmarking launches apart, and each site's first variants are
   held with their arguments. Nothing is profiled while it runs.
2. `time`: every held variant is replayed and timed (`ladder.runner.capture.replay.time_replay`: events,
   L2 flush, median on a device; the host clock under the interpreter), the sites with the most
   launches first, until `total_s` of timing is spent; what is left says it was not timed.
3. `profile`: each named site's variant is replayed `launches` times between cudaProfilerStart and
   cudaProfilerStop, logged under the case `site:KEY`, so that Nsight Compute (run with
   `--profile-from-start off`) sees those replays and nothing else of the script.

One log line for the script (`case: script`: what it launched, what was left out, how long it
ran) and one per site (`case: site`), written as they are known.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ladder.runner.errors import one_line

DEFAULT_TIMING = {"budget_s": 0.05, "min_reps": 10, "max_reps": 100, "total_s": 20.0}


def run(job: dict, log: Any, emit: Callable[[dict], None], profiled: Callable) -> None:
    from ladder.runner.backends import select_backend
    from ladder.runner.capture import run_script
    from ladder.runner.capture.sites import SiteRecorder

    backend = select_backend(job.get("backend") or "cuda")
    backend.setup()  # the interpreter's autotuner gets its host benchmarker here; a device binds its clock
    started, failure = time.perf_counter(), None
    with SiteRecorder() as recorder:
        try:
            run_script(job["script"], job.get("argv") or [])
        except Exception as error:  # noqa: BLE001 (what it launched before it failed is still worth timing)
            failure = one_line(error)
    backend.synchronize()
    sites = recorder.ordered()
    emit({"case": "script", "script_s": round(time.perf_counter() - started, 3), "sites": len(sites),
          "launches": sum(site.launches for site in sites) + recorder.untracked_launches,
          "tuning_launches": recorder.tuning_launches, "untracked_launches": recorder.untracked_launches,
          "backend": backend.name, "device": backend.device_name(), **({"failed": failure} if failure else {})})
    timings = _time_sites(sites, backend, {**DEFAULT_TIMING, **job["time"]}) if job.get("time") else {}
    for site in sites:
        described = site.to_dict()
        for variant in described["variants"]:
            variant.update(timings.get((site.key, variant["key"]), {"not_timed": "timing was not asked for"}))
        emit({"case": "site", "site": described})
    if job.get("profile"):
        _profile_sites(sites, job["profile"], log, emit, profiled, backend.device_type)


def _time_sites(sites: list, backend: Any, settings: dict) -> dict[tuple[str, str], dict]:
    """(site key, variant key) -> {"time_ms": summary} | {"not_timed": why}: the sites with the most
    launches first, each site's first variant before any site's second, within `total_s`."""
    from ladder.runner.capture.replay import time_replay

    by_launches = sorted(sites, key=lambda site: -site.launches)
    order = []
    for rank in range(max((len(site.variants) for site in sites), default=0)):
        order += [(site, site.variants[rank]) for site in by_launches if rank < len(site.variants)]
    results: dict[tuple[str, str], dict] = {}
    deadline = time.perf_counter() + settings["total_s"]
    for site, variant in order:
        key = (site.key, variant.key)
        if time.perf_counter() > deadline:
            results[key] = {"not_timed": f"the replay time budget ({settings['total_s']:g} s) was spent"}
            continue
        try:
            results[key] = {"time_ms": time_replay(variant.replay, backend, budget_s=settings["budget_s"],
                                                   min_reps=settings["min_reps"], max_reps=settings["max_reps"])}
        except Exception as error:  # noqa: BLE001 (one launch that cannot be replayed must not hide the others)
            results[key] = {"not_timed": f"replay failed: {one_line(error)}"}
    return results


def _profile_sites(sites: list, wanted: dict, log: Any, emit: Callable[[dict], None], profiled: Callable,
                   device: str) -> None:
    by_key = {site.key: site for site in sites}
    for choice in wanted["sites"]:
        site = by_key.get(choice["key"])
        if site is None or not site.variants:
            emit({"case": f"site:{choice['key']}", "launches": [], "error": "the site did not launch this time"})
            continue
        variant = next((v for v in site.variants if v.key == choice.get("variant")), site.variants[0])
        try:
            variant.replay()  # the launch is warm before the profiler sees it
            names = profiled(log, lambda variant=variant: [variant.replay() for _ in range(wanted.get("launches", 1))],
                             device)
            emit({"case": f"site:{site.key}", "launches": names})
        except Exception as error:  # noqa: BLE001 (a site that cannot be profiled leaves the others)
            emit({"case": f"site:{site.key}", "launches": log.take(), "error": one_line(error)})
