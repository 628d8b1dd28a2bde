"""The gate: which candidates of a round are correct and really faster than the best so far.

One judge run (``ladder.runner.bench.bench``, every solution in a sandboxed process of its own) holds the
best so far twice, the initial version (once the best is no longer it) and every candidate of the
round, all timed interleaved on the same fresh inputs. A candidate is accepted only when:

1. the judge found it correct on every case and seed and rejected nothing;
2. it is faster than the best on the operator's geomean over cases by more than the measured
   spread: the best timed against itself in the same run (``SPREAD_FLOOR`` at least);
3. no case is slower than the initial version by more than that case's own spread
   (``CASE_SPREAD_FLOOR`` at least);
4. no case is timed below its roofline floor (a bug until someone proves otherwise).

Among the accepted, the fastest on the geomean becomes the new best. A run in which the best so far
itself fails (either copy rejected, wrong on a case, or not timed on one) is void: it decides
nothing about any correct candidate (``yardstick_failure``), and the loop proposes those again.
So is a candidate the judge set aside for running out of device memory: the judge and every
contestant share the device, and the memory another held is no verdict on this one.

The judge's processes run without this process's secrets (``without_secrets``): candidates are
written by models and agents, and one that raised with a key in its message would carry the key
into the verdict, the journal and the report. They record each autotuner's choice in the
contestant's own kernel cache (``choices_recorded``): the best keeps the configuration it was timed
with from round to round, and the next round's rung 3 describes that configuration alone.
"""
from __future__ import annotations

import contextlib
import math
import os
import re
import statistics
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from ladder.runner.errors import OUT_OF_MEMORY

SPREAD_FLOOR = 0.01
CASE_SPREAD_FLOOR = 0.03
BEST, BEST_AGAIN, INITIAL = "best", "best-again", "initial"
# Environment variables no candidate may see: API keys, tokens, passwords (OPENAI_API_KEY, HF_TOKEN...).
SECRET_NAME = re.compile(r"(^|_)(API_KEY|ACCESS_KEY|SECRET_KEY|SECRET|TOKEN|PASSWORD)$", re.IGNORECASE)
_environment_lock = threading.Lock()


@dataclass
class GateSettings:
    backend: str | None = None
    seeds: int = 2
    budget_s: float = 0.4
    min_reps: int = 20
    max_reps: int = 200
    timeout_s: float = 3600.0
    quick: bool = False

    def options(self) -> dict[str, Any]:
        return {"seeds": self.seeds, "budget_s": self.budget_s, "min_reps": self.min_reps,
                "max_reps": self.max_reps, "quick": self.quick}


@dataclass
class CandidateVerdict:
    """What the gate decided for one candidate, and the numbers it decided on."""

    name: str
    accepted: bool
    reason: str
    compiled: bool
    correct: bool
    timed: bool
    geomean_vs_best: float | None = None
    geomean_vs_initial: float | None = None
    cases: list[dict[str, Any]] = field(default_factory=list)
    judged: bool = True  # False: the run's yardstick failed, so the candidate is neither a win nor tried

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class GateResult:
    verdicts: dict[str, CandidateVerdict]
    spread: float
    best_cases: list[dict[str, Any]]  # the best's own per-case figures in this run
    device: str | None
    device_uuid: str | None
    timed: bool
    record: dict[str, Any]  # the judge's evaluation, whole (rung 2 of the next round reads the best's)
    void: str | None = None  # why the best could not be this run's yardstick (see yardstick_failure)
    # Seconds the evaluation queued for a device before it ran (on a cluster, behind other operators'
    # gates; 0 in one process): the run's budget does not count them (``loop.stop_reason``).
    waited_s: float = 0.0

    @property
    def winner(self) -> CandidateVerdict | None:
        accepted = [v for v in self.verdicts.values() if v.accepted]
        return max(accepted, key=lambda v: v.geomean_vs_best or 0.0) if accepted else None


Bench = Callable[..., dict[str, Any]]


def run_gate(problem: Path, best: Path, initial: Path, candidates: dict[str, Path], settings: GateSettings,
             torch_compile: bool = False, bench: Bench | None = None,
             progress: Callable[[dict], None] | None = None) -> GateResult:
    """Judge the candidates against the best (and the initial version) in one interleaved run;
    ``torch_compile`` also times the reference compiled (the baseline's figures for reports)."""
    from ladder.runner.bench import bench as runner_bench
    from ladder.runner.capture.picks import choices_recorded

    solutions: dict[str, Path] = {BEST: best, BEST_AGAIN: best}
    if initial.read_bytes() != best.read_bytes():
        solutions[INITIAL] = initial
    solutions.update(candidates)
    with without_secrets(), choices_recorded():
        result = (bench or runner_bench)(problem, solutions, settings.backend, timeout=settings.timeout_s,
                                         progress=progress, torch_compile=torch_compile, **settings.options())
    return decide(result, list(candidates), INITIAL if INITIAL in solutions else BEST)


@contextlib.contextmanager
def without_secrets():
    """This process's environment without its secrets while the block runs (the processes it starts
    inherit that environment); one block at a time, so that two judge runs never interleave the
    removal and the restoring."""
    with _environment_lock:
        hidden = {name: os.environ.pop(name) for name in list(os.environ) if SECRET_NAME.search(name)}
        try:
            yield
        finally:
            os.environ.update(hidden)


def decide(result: dict[str, Any], names: list[str], initial: str) -> GateResult:
    """The gate's decisions from a judge's evaluation (see the module docstring)."""
    reports = result["solutions"]
    timed = bool(result.get("timed"))
    best_times = _medians(reports[BEST])
    again = _medians(reports[BEST_AGAIN])
    ratios = [again[c] / best_times[c] for c in best_times if c in again]
    spread = max(SPREAD_FLOOR, abs(statistics.geometric_mean(ratios) - 1.0)) if ratios else SPREAD_FLOOR
    case_spread = {c: max(CASE_SPREAD_FLOOR, abs(again[c] / best_times[c] - 1.0)) for c in best_times if c in again}
    initial_times = _medians(reports[initial])
    eager = {c["case"]: (c.get("reference_ms") or {}).get("median") for c in result.get("cases", [])}
    verdicts = {name: _verdict(name, reports[name], best_times, initial_times, spread, case_spread, timed, eager)
                for name in names}
    void = yardstick_failure(reports, timed)
    if void is not None:
        for verdict in verdicts.values():
            if verdict.correct:  # a candidate's own failure stands; a correct one was compared with nothing
                verdict.accepted, verdict.judged = False, False
                verdict.reason = f"not judged: {void}"
    return GateResult(verdicts=verdicts, spread=spread,
                      best_cases=case_rows(reports[BEST], best_times, initial_times, eager),
                      device=result.get("device"), device_uuid=result.get("device_uuid"), timed=timed,
                      record=result, void=void)


def yardstick_failure(reports: dict[str, Any], timed: bool) -> str | None:
    """Why the best so far cannot be this run's yardstick, or None when it can.

    Both copies of the best must be correct, and timed on every case where the backend times: a
    candidate is compared with the first and the spread comes from the second. When either failed
    in this run (a crash, a lost contestant, a case the judge could not time), no candidate of the
    run can be accepted or refused on its speed, and none is counted as tried."""
    for name in (BEST, BEST_AGAIN):
        report = reports.get(name) or {}
        copy = "the best so far" if name == BEST else "the best so far (its second copy)"
        rejected = report.get("rejected")
        if rejected:
            return f"{copy} was rejected in this run ({rejected['stage']}): {rejected['reason']}"
        cases = report.get("cases", [])
        wrong = next((c for c in cases if not c.get("correct")), None)
        if wrong is not None:
            return f"{copy} failed case {wrong.get('label')} in this run: {wrong.get('reason')}"
        untimed = [c.get("label") for c in cases if timed and not c.get("time_ms")]
        if untimed:
            return f"{copy} was not timed on case {', '.join(map(str, untimed))} in this run"
    return None


def _verdict(name: str, report: dict[str, Any], best: dict[int, float], initial: dict[int, float], spread: float,
             case_spread: dict[int, float], timed: bool, eager: dict[int, float | None]) -> CandidateVerdict:
    rejected = report.get("rejected")
    compiled = not (rejected and rejected.get("stage") in ("static", "load"))
    correct = bool(report.get("ok"))
    times = _medians(report)
    cases = case_rows(report, best, initial, eager)
    verdict = CandidateVerdict(name, False, "", compiled, correct, timed and bool(times), cases=cases)
    if rejected and rejected.get("stage") == OUT_OF_MEMORY:
        verdict.judged, verdict.reason = False, f"not judged: out of device memory in this run: {rejected['reason']}"
        return verdict
    if rejected:
        verdict.reason = f"rejected ({rejected['stage']}): {rejected['reason']}"
        return verdict
    wrong = next((c for c in report["cases"] if not c["correct"]), None)
    if wrong is not None:
        verdict.reason = f"case {wrong.get('label')}: {wrong.get('reason')}"
        return verdict
    if not verdict.timed or set(times) != set(best):
        untimed = sorted(set(best) - set(times)) if verdict.timed else None
        verdict.reason = (f"correct, but not timed on case {', '.join(map(str, untimed))}" if untimed
                          else "correct, but not timed on every case (this backend does not time)")
        return verdict
    verdict.geomean_vs_best = geomean([best[c] / times[c] for c in times])
    if initial:
        verdict.geomean_vs_initial = geomean([initial[c] / times[c] for c in times if c in initial])
    below = next((c for c in report["cases"] if any("roofline floor" in flag for flag in c.get("flags", []))), None)
    if below is not None:
        verdict.reason = (f"case {below.get('label')} timed below its roofline floor: not accepted until the "
                          "bytes/flops or the kernel are explained")
        return verdict
    slower = next((c for c in sorted(times) if c in initial and times[c] > initial[c] * (1 + case_spread.get(c, CASE_SPREAD_FLOOR))),
                  None)
    if slower is not None:
        label = next(c.get("label") for c in report["cases"] if c["case"] == slower)
        verdict.reason = (f"slower than the initial version on case {label} "
                          f"({times[slower]:.4g} vs {initial[slower]:.4g} ms)")
        return verdict
    if verdict.geomean_vs_best <= 1.0 + spread:
        verdict.reason = (f"not faster than the best by more than the spread: {verdict.geomean_vs_best:.3f}x "
                          f"(spread {spread:.1%})")
        return verdict
    verdict.accepted, verdict.reason = True, f"{verdict.geomean_vs_best:.3f}x faster than the best (spread {spread:.1%})"
    return verdict


def _medians(report: dict[str, Any]) -> dict[int, float]:
    return {c["case"]: c["time_ms"]["median"] for c in report.get("cases", []) if c.get("correct") and c.get("time_ms")}


def case_rows(report: dict[str, Any], best: dict[int, float], initial: dict[int, float],
              eager: dict[int, float | None]) -> list[dict[str, Any]]:
    """One solution's per-case figures as the journal keeps them (the compile-only gate's too)."""
    rows = []
    for case in report.get("cases", []):
        time_ms = (case.get("time_ms") or {}).get("median")
        row = {"case": case["case"], "label": case.get("label"), "correct": bool(case.get("correct")),
               "time_ms": time_ms, "eager_ms": eager.get(case["case"]), "roofline_pct": case.get("roofline_pct"),
               "speedup_vs_eager": case.get("speedup"), "speedup_vs_compile": case.get("speedup_vs_compile"),
               "host_bound": case.get("host_bound")}
        if time_ms and case["case"] in best:
            row["speedup_vs_best"] = best[case["case"]] / time_ms
        if time_ms and case["case"] in initial:
            row["speedup_vs_initial"] = initial[case["case"]] / time_ms
        if not case.get("correct"):
            row["reason"] = case.get("reason")
        rows.append(row)
    return rows


def geomean(values: list[float | None]) -> float | None:
    values = [v for v in values if v and v > 0 and math.isfinite(v)]
    return statistics.geometric_mean(values) if values else None
