"""One suite run: every operator through the ordered ``STAGES``, rows and meta out, the JSON document.

The loop runs each operator through ``STAGES``, an ordered mapping of named stages, each taking the
operator and its row so far and returning the row extended: ``bench`` here; diagnosing and
optimizing each operator are stages of the floors above (``ladder.diagnoser.batch``, ``ladder.diagnoser.optimize``).
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable

from ladder.diagnoser.suite.operators import Operator, SuiteError, quick_problems
from ladder.diagnoser.suite.rows import failed_row, operator_row, summarize
from ladder.runner.precompile import device_target, precompile

# Suite defaults: lighter than `ladder bench` (37 operators x 5 cases must fit in a few minutes),
# still several verified repetitions per contestant and case.
DEFAULT_SEEDS = 2
DEFAULT_BUDGET_S = 0.25
DEFAULT_MIN_REPS = 20
DEFAULT_MAX_REPS = 200


@dataclass
class BenchSettings:
    """How each operator is evaluated (``ladder.runner.options.Options`` fields, plus where it runs)."""

    backend: str | None = None  # None: cuda > npu > interpret
    isolate: bool = False  # one worker subprocess per operator (survives crashes; slower)
    precompile: bool = True  # on CUDA, compile every kernel in parallel before the run
    timeout_s: float = 600.0  # per operator, isolated mode only
    seeds: int = DEFAULT_SEEDS
    seed: int | None = None
    time: bool = True
    budget_s: float = DEFAULT_BUDGET_S
    min_reps: int = DEFAULT_MIN_REPS
    max_reps: int = DEFAULT_MAX_REPS

    def options(self) -> dict[str, Any]:
        return {"seeds": self.seeds, "seed": self.seed, "time": self.time, "budget_s": self.budget_s,
                "min_reps": self.min_reps, "max_reps": self.max_reps}


def evaluate(problem: Path, solution: Path, settings: BenchSettings,
             progress: Callable[[dict], None] = lambda event: None) -> dict[str, Any]:
    """The runner's flat record (``ladder.runner.bench.bench_pair``) of one solution against its problem.

    In-process by default: the suite's own solutions are trusted code, and one Python process for
    the whole suite saves a worker start (torch + triton imports, device context) per operator.
    ``isolate`` runs each evaluation in the runner's worker subprocess instead.
    """
    from ladder.runner.bench import bench_pair

    return bench_pair(solution, problem, backend=settings.backend, timeout=settings.timeout_s,
                      progress=progress, isolate=settings.isolate, **settings.options())


Progress = Callable[[dict], None]
# One stage: (operator, its problem file, settings, progress, the row so far) -> the row, extended.
Stage = Callable[[Operator, Path, BenchSettings, Progress, dict], dict]


def bench_stage(op: Operator, problem: Path, settings: BenchSettings, progress: Progress,
                row: dict[str, Any]) -> dict[str, Any]:
    """Correctness and timing of the initial solution against eager PyTorch, through the runner.

    Adds the operator's figures, and under ``run`` where it ran (the suite lifts that into its meta).
    """
    record = evaluate(problem, op.solution, settings, progress)
    run = {key: record.get(key) for key in ("backend", "device", "timed", "ceilings")}
    return {**row, **operator_row(op, record), "run": run}


# The per-operator pipeline, in order. Diagnosing and optimizing are later stages.
STAGES: dict[str, Stage] = {"bench": bench_stage}


def check_backend(name: str | None) -> None:
    """Fail early, once, when the requested backend cannot run here."""
    from ladder.runner.backends import BackendError, select_backend

    try:
        select_backend(name)
    except BackendError as error:
        raise SuiteError(str(error)) from None


def run_suite(operators: list[Operator], settings: BenchSettings, *, quick: bool = False,
              on_progress: Callable[[Operator, dict], None] = lambda op, event: None,
              on_operator: Callable[[dict[str, Any], dict[str, Any]], None] = lambda row, meta: None,
              ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Run every operator through the stages; (rows, meta). ``on_operator`` sees each finished row.

    A broken operator (its problem file fails to load or run) becomes a failed row and the suite
    goes on. A device lost in-process stops the suite: the operators left get failed rows, since
    they would share the broken device context.
    """
    from ladder.runner.bench import BenchError

    check_backend(settings.backend)
    meta: dict[str, Any] = {"backend": None, "device": None, "ceilings": None, "timed": False,
                            "quick": quick, "settings": asdict(settings),
                            "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    rows: list[dict[str, Any]] = []
    stopped = None
    suite_started = time.monotonic()
    with quick_problems(operators) if quick else contextlib.nullcontext({}) as small:
        target = device_target() if settings.precompile and settings.backend in (None, "cuda") else None
        if target is not None:
            on_progress(operators[0], {"stage": "precompile",
                                       "message": f"compiling every kernel for {target} in parallel"})
            meta["precompile"] = precompile([(op.solution, small.get(op.key, op.problem)) for op in operators],
                                            target, jobs=min(len(operators), os.cpu_count() or 1, 16))
        for op in operators:
            if stopped is not None:
                rows.append(failed_row(op, f"not run: {stopped}"))
                continue
            started = time.monotonic()
            row: dict[str, Any] = {}
            try:
                for stage in STAGES.values():
                    row = stage(op, small.get(op.key, op.problem), settings,
                                lambda event, op=op: on_progress(op, event), row)
            except BenchError as error:
                row = failed_row(op, str(error))
            row["elapsed_s"] = round(time.monotonic() - started, 2)
            run = row.pop("run", {})
            for key in ("backend", "device", "ceilings"):
                meta[key] = meta[key] or run.get(key)
            meta["timed"] = meta["timed"] or bool(run.get("timed"))
            rows.append(row)
            on_operator(row, meta)
            if row.get("device_error") and not settings.isolate:
                stopped = f"the device was lost during {op.key} (rerun with --isolate)"
                meta["stopped"] = stopped
    meta["elapsed_s"] = round(time.monotonic() - suite_started, 1)
    return rows, meta


def report(rows: list[dict[str, Any]], meta: dict[str, Any]) -> dict[str, Any]:
    """The JSON document: metadata, the summary across operators, one row per operator."""
    return {"meta": {**meta, "versions": _versions()}, "summary": summarize(rows), "operators": rows}


def _versions() -> dict[str, str]:
    versions = {"python": sys.version.split()[0]}
    for name in ("torch", "triton"):
        module = sys.modules.get(name)
        if module is not None:
            versions[name] = getattr(module, "__version__", "?")
    return versions


def write_json(path: Path, document: dict[str, Any]) -> None:
    """Write atomically, so an interrupted run leaves the last complete document."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(path.suffix + ".tmp")
    temporary.write_text(json.dumps(document, indent=1, default=json_default) + "\n")
    temporary.replace(path)


def json_default(value: Any) -> Any:
    """JSON for what json cannot write: non-finite floats as null, anything else as its text."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return str(value)
