"""The runner's public API: benchmark solutions against a problem, each evaluation in a subprocess.

``bench_pair`` is what ``ladder bench`` prints and what ``ladder suite`` / ``ladder diagnose`` call::

    from ladder.runner.bench import bench_pair
    record = bench_pair("solution.py", "problem.py", backend=None)   # None: cuda > npu > interpret
    record["ok"]                      # every case correct and nothing rejected
    record["rejected"]                # None or {"stage": static|load|runtime|crash|timeout, "reason"}
    for case in record["cases"]:
        case["correct"], case.get("reason")          # reason only when not correct
        case["time_ms"]                              # {median, p10, p25, p75, p90, iqr, mean, min, reps}
        case["reference_ms"], case["speedup"]        # eager PyTorch median, reference / candidate
        case["gbps"], case["tflops"], case["roofline_pct"]

With ``baseline="initial.py"`` the baseline is evaluated and timed in the same worker, interleaved
with the candidate on the same inputs; its record is under ``record["baseline"]`` and each case gets
``speedup_vs_baseline``. ``bench(problem, {"name": path, ...})`` is the general form (any number of
solutions) and returns the whole evaluation (``ladder.runner.evaluate``) with ``solutions`` by name.

Errors the caller must fix (problem file broken, backend not available) raise ``BenchError``; every
failure of candidate code is data in the record (never an exception), including timeouts and crashes
of the worker process.
"""
from __future__ import annotations

import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable

from ladder.runner import seeds
from ladder.runner.isolation import WorkerOutcome, run_worker
from ladder.runner.options import Options
from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)

DEFAULT_TIMEOUT_S = 600.0


class BenchError(Exception):
    """A problem the caller must fix: the problem file, the backend (one-line message).

    ``detail`` carries the worker's traceback when the runner itself failed (stage ``internal``).
    """

    def __init__(self, message: str, stage: str = "", detail: str = ""):
        super().__init__(message)
        self.stage, self.detail = stage, detail


def bench(problem: str | Path, solutions: dict[str, str | Path], backend: str | None = None, *,
          timeout: float = DEFAULT_TIMEOUT_S, progress: Callable[[dict], None] | None = None,
          isolate: bool = True, **options: Any) -> dict[str, Any]:
    """Evaluate every solution against the problem in one worker process (interleaved timing).

    ``options`` are ``ladder.runner.options.Options`` fields: seeds, seed, time, torch_compile,
    static_checks, guards, cases, reps, min_reps, max_reps, budget_s.

    ``isolate=False`` evaluates in this process instead, for trusted code only (the suite's own
    solutions, a user's kernel under diagnosis): it saves a worker start (torch and triton imports,
    a device context) per call, but a crash or a hang is then the caller's. An interpreter run that
    this process can no longer set up still gets its worker.
    """
    settings = Options(**options)
    # Drawn here, not in the judge: a run that dies still says which seed it had (--seed replays it).
    settings.seed = settings.seed if settings.seed is not None else seeds.draw()
    if not isolate:
        settings.contestants = "in-process"
    request = {
        "problem": str(Path(problem).resolve()),
        "solutions": {name: str(Path(path).resolve()) for name, path in solutions.items()},
        "backend": backend or "auto",
        "options": asdict(settings),
    }
    if not isolate and not interpreter_needs_fresh_process(backend):
        from ladder.runner import worker

        result = worker.run(request, progress or (lambda event: None))
        _raise_on_error(result)
        return _finish(result, "ok", None)
    outcome = run_worker(request, timeout, on_event=progress or (lambda event: None))
    result = outcome.result
    if result is not None:
        _raise_on_error(result)
    if result is None:
        result = _failed_evaluation(request, outcome)
    return _finish(result, outcome.status, outcome.elapsed_s)


def _raise_on_error(result: dict[str, Any]) -> None:
    """An evaluation that could not start (broken problem file, backend, runner bug) is the caller's."""
    if "error" in result:
        error = result["error"]
        message = error["reason"] if error["stage"] != "internal" else f"internal runner error: {error['reason']}"
        raise BenchError(message, error["stage"], error.get("detail", ""))


def _finish(result: dict[str, Any], status: str, elapsed_s: float | None) -> dict[str, Any]:
    for report in result["solutions"].values():
        report["ok"] = bool(report["ok"])
    result["ok"] = all(report["ok"] for report in result["solutions"].values())
    elapsed = result.get("elapsed_s") if elapsed_s is None else round(elapsed_s, 3)
    result["worker"] = {"status": status, "elapsed_s": elapsed}
    return result


def interpreter_needs_fresh_process(backend: str | None) -> bool:
    """Whether an interpreter run must happen in a new process.

    ``TRITON_INTERPRET`` is read when ``@triton.jit`` decorates, and Triton's own standard library
    (``tl.zeros``, ``tl.sigmoid``, ...) is decorated when ``triton.language`` is imported: once that
    happened without it, interpreted kernels calling those functions fail in this process.
    """
    from ladder.runner.backends import select_backend

    if select_backend(backend).name != "interpret":
        return False
    standard = sys.modules.get("triton.language.standard")
    return standard is not None and type(standard.zeros).__name__ != "InterpretedFunction"


def bench_pair(solution: str | Path, problem: str | Path, *, baseline: str | Path | None = None,
               backend: str | None = None, **kwargs: Any) -> dict[str, Any]:
    """One solution (and optionally a baseline) against the problem: a flat record (module docstring)."""
    solutions = {"solution": solution}
    if baseline is not None:
        solutions = {"baseline": baseline, "solution": solution}
    result = bench(problem, solutions, backend, **kwargs)
    record = flat_record(result, "solution")
    if baseline is not None:
        record["baseline"] = flat_record(result, "baseline")
        for case, base in zip(record["cases"], record["baseline"]["cases"]):
            if case.get("time_ms") and base.get("time_ms"):
                case["speedup_vs_baseline"] = base["time_ms"]["median"] / case["time_ms"]["median"]
    return record


def flat_record(result: dict[str, Any], name: str) -> dict[str, Any]:
    """One solution's report with the problem-level facts of each case merged into its cases."""
    report = result["solutions"][name]
    per_case = {case["case"]: case for case in result.get("cases", [])}
    cases = []
    for case in report["cases"]:
        facts = per_case.get(case["case"], {})
        merged = dict(case)
        merged["reference_ms"] = (facts.get("reference_ms") or {}).get("median")
        merged["torch_compile_ms"] = (facts.get("torch_compile_ms") or {}).get("median")
        for key in ("bytes", "flops", "reference_precision", "allow_tf32", "compute_dtype"):
            if key in facts:
                merged[key] = facts[key]
        cases.append(merged)
    return {
        "solution": report["path"],
        "problem": result["problem"],
        "backend": result.get("backend"),
        "device": result.get("device"),
        "timed": result.get("timed", False),
        "ok": report["ok"],
        "rejected": report["rejected"],
        "static": report["static"],
        "cases": cases,
        "base_seed": result.get("base_seed"),
        "seeds_per_case": result.get("seeds_per_case"),
        "ceilings": result.get("ceilings"),
        "device_error": result.get("device_error"),
        "elapsed_s": result.get("worker", {}).get("elapsed_s"),
    }


def _failed_evaluation(request: dict[str, Any], outcome: WorkerOutcome) -> dict[str, Any]:
    """The record of an evaluation whose worker timed out or crashed: every solution gets the reason,
    and the one that was running (the last progress event names it) is blamed for it."""
    last = outcome.last_event or {}
    running = last.get("solution")
    where = last.get("stage")
    context = f" while in stage '{where}'" if where else ""
    if "case" in last:
        context += f" of case {last['case']}"
    cases = next((event["cases"] for event in outcome.events if event.get("event") == "problem"), None)
    cases = cases or [{"case": 0, "params": {}, "label": "default"}]
    wanted = request["options"].get("cases")
    if wanted is not None:
        cases = [case for case in cases if case["case"] in wanted]
    reached = last.get("case")
    solutions = {}
    for name, path in request["solutions"].items():
        if running is None or name == running:
            rejected = {"stage": outcome.status, "reason": f"{outcome.reason}{context}"}
        else:
            rejected = {"stage": "not-run", "reason": f"the worker stopped while evaluating {running}: {outcome.reason}"}
        solutions[name] = {
            "name": name, "path": path, "ok": False, "rejected": rejected, "static": [],
            "cases": [{"case": case["case"], "params": case["params"], "label": case["label"], "correct": False,
                       "reason": (f"not run: {rejected['stage']} in an earlier case" if reached is not None
                                  and case["case"] > reached else f"{rejected['stage']}: {rejected['reason']}")}
                      for case in cases],
        }
    return {
        "problem": request["problem"], "backend": request["backend"], "device": None, "timed": False,
        "ceilings": None, "base_seed": request["options"].get("seed"), "cases": [],
        "seeds_per_case": request["options"].get("seeds"), "device_error": None,
        "solutions": solutions, "log_tail": outcome.log_tail[-20:],
    }
