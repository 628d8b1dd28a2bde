"""The driver's script job: run a script once, recording its launch sites, then replay them.

    {"script": path, "argv": [...], "backend": "cuda" | "interpret",
     "time": {"budget_s", "min_reps", "max_reps", "total_s"} | null,
     "profile": {"sites": [{"key", "variant"}] | "choose": {"sites": n, "share": x}, "launches": n} | null}

1. The script runs as `__main__` under `ladder.runner.capture.sites.SiteRecorder`: every launch is counted
   by its site, the autotuner's benchmarking launches apart, and each site's first variants are
   held with their arguments. Nothing is profiled while it runs.
2. `time`: every held variant is replayed and timed (`ladder.runner.capture.replay.time_replay`: events,
   L2 flush, median on a device; the host clock under the interpreter), the sites with the most
   launches first, until `total_s` of timing is spent; what is left says it was not timed.
3. `profile`: each named site's variant is replayed `launches` times between cudaProfilerStart and
   cudaProfilerStop, logged under the case `site:KEY`, so that Nsight Compute (run with
   `--profile-from-start off`) sees those replays and nothing else of the script. With `choose`
   instead of named sites (a job that is timed and profiled in one run, under Nsight Compute), the
   driver picks them itself from the times it just measured (`heaviest`: the sites carrying most of
   the kernel time, at most `sites`, until they carry `share` of it) and logs its choice
   (`case: profile-choice`): one run of the script instead of one to time and one to profile.

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
    described = timed_sites(sites, backend, job.get("time"))
    for site in described:
        emit({"case": "site", "site": site})
    wanted = job.get("profile")
    if wanted and "choose" in wanted:
        chosen, share = heaviest(time_shares(described), wanted["choose"]["sites"], wanted["choose"]["share"])
        emit({"case": "profile-choice", "sites": chosen, "share": share})
        wanted = {"sites": chosen, "launches": wanted.get("launches", 1)}
    if wanted:
        _profile_sites(sites, wanted, log, emit, profiled, backend.device_type)


def forward_sites(run: Callable[[], Any], backend: Any, timing: dict) -> list[dict]:
    """One call of `run` (a forward already in its steady state) recorded by launch site, each site
    timed by replay: a forward of several kernels split into its kernels (`ladder.diagnoser.profile.split`)."""
    from ladder.runner.capture.sites import SiteRecorder

    with SiteRecorder() as recorder:
        run()
    backend.synchronize()
    return timed_sites(recorder.ordered(), backend, timing)


def timed_sites(sites: list, backend: Any, timing: dict | None) -> list[dict]:
    """The recorded sites as log records, each variant with its replayed time or why it has none."""
    timings = _time_sites(sites, backend, {**DEFAULT_TIMING, **timing}) if timing else {}
    described = []
    for site in sites:
        described.append(site.to_dict())
        for variant in described[-1]["variants"]:
            variant.update(timings.get((site.key, variant["key"]), {"not_timed": "timing was not asked for"}))
    return described


def site_seconds(site: dict) -> tuple[float | None, bool]:
    """The kernel time the site carries over the script (launches x replayed median), and whether
    part of it is estimated (launches of variants not timed, at the timed ones' mean time)."""
    timed = [v for v in site["variants"] if v.get("time_ms")]
    if not timed:
        return None, False
    seconds = sum(v["launches"] * v["time_ms"]["median"] for v in timed) / 1e3
    untimed = site.get("other_launches", 0) + sum(v["launches"] for v in site["variants"] if not v.get("time_ms"))
    if untimed:
        seconds += untimed * seconds / sum(v["launches"] for v in timed)
    return seconds, bool(untimed)


def time_shares(sites: list[dict]) -> list[tuple[float | None, dict]]:
    """Each site with the share of the script's kernel time it carries (None: it was not timed)."""
    seconds = [site_seconds(site)[0] for site in sites]
    total = sum(s for s in seconds if s)
    return [(s / total if s and total else None, site) for s, site in zip(seconds, sites)]


def heaviest(shares: list[tuple[float | None, dict]], count: int, share: float) -> tuple[list[dict], float]:
    """The sites Nsight Compute profiles, from (share of the kernel time, described site): the heaviest
    first, at most `count`, until together they carry `share`; each in the variant carrying most of
    its time. Returns the choices (`key`, `variant`, `kernel`) and the share they carry."""
    chosen, reached = [], 0.0
    for carried, site in sorted((pair for pair in shares if pair[0]), key=lambda pair: -pair[0]):
        if len(chosen) >= count or (chosen and reached >= share):
            break
        variant = max((v for v in site["variants"] if v.get("time_ms")),
                      key=lambda v: v["launches"] * v["time_ms"]["median"])
        chosen.append({"key": site["key"], "variant": variant["key"], "kernel": site["kernel"]})
        reached += carried
    return chosen, reached


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
