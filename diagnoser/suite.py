"""``ladder suite``: bench every operator of the kernel suite, initial Triton against PyTorch eager.

The suite lives in ``kernels/level<L>/<NN>_<name>/{problem.py,solution.py}`` (KernelBench numbering);
``solution.py`` is the first, untuned Triton translation of the operator. For each operator the
runner's evaluation (``runner.evaluate``: correctness on fresh inputs against a float64 reference,
guards, interleaved device timing) produces one record per case; the suite condenses them into one
row per operator (geometric means over its cases, as the paper we follow does) and a summary across
operators (geometric mean and median).

The loop runs each operator through ``STAGES``, an ordered mapping of named stages, each taking the
operator and its row so far and returning the row extended: today only ``bench``; diagnosing and
optimizing each operator are further stages.

Runs on the GPU machine with nothing beyond torch, triton, click, pyyaml and numpy.
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import click

KERNELS_ROOT = Path(__file__).resolve().parent.parent / "kernels"
LEVELS = (1, 2)

# Suite defaults: lighter than `ladder bench` (37 operators x 5 cases must fit in a few minutes),
# still several verified repetitions per contestant and case.
DEFAULT_SEEDS = 2
DEFAULT_BUDGET_S = 0.25
DEFAULT_MIN_REPS = 20
DEFAULT_MAX_REPS = 200


class SuiteError(Exception):
    """A usage error (unknown operator, empty selection): one line, exit status 2."""


# --------------------------------------------------------------------------------- the operators


@dataclass(frozen=True)
class Operator:
    """One operator of the suite: ``kernels/level1/23_softmax``."""

    level: int
    number: int
    name: str  # without the number: "softmax"
    folder: Path

    @property
    def key(self) -> str:
        return f"level{self.level}/{self.folder.name}"

    @property
    def problem(self) -> Path:
        return self.folder / "problem.py"

    @property
    def solution(self) -> Path:
        return self.folder / "solution.py"

    def matches(self, selector: str) -> bool:
        """``level1/23_softmax``, ``23_softmax``, ``softmax`` or ``23`` (with or without ``kernels/``)."""
        selector = selector.strip().strip("/").removeprefix("kernels/")
        if selector.isdigit():
            return int(selector) == self.number
        return selector in (self.key, self.folder.name, self.name)


def discover(root: Path = KERNELS_ROOT, level: int | None = None,
             only: tuple[str, ...] = ()) -> list[Operator]:
    """The operators under ``root``, in (level, number) order, filtered by level and selectors."""
    operators = []
    for lvl in LEVELS:
        for folder in sorted((root / f"level{lvl}").glob("*_*")):
            number, _, name = folder.name.partition("_")
            if folder.is_dir() and number.isdigit() and (folder / "problem.py").is_file():
                operators.append(Operator(lvl, int(number), name, folder))
    operators.sort(key=lambda op: (op.level, op.number))
    if level is not None:
        operators = [op for op in operators if op.level == level]
    if only:
        unknown = [selector for selector in only if not any(op.matches(selector) for op in operators)]
        if unknown:
            raise SuiteError(f"no operator matches {', '.join(map(repr, unknown))}"
                             + (f" in level {level}" if level is not None else "")
                             + " (names look like level1/23_softmax, 23_softmax, softmax or 23)")
        operators = [op for op in operators if any(op.matches(selector) for selector in only)]
    if not operators:
        raise SuiteError(f"no operators found under {root}")
    return operators


def quick_problem_source(problem: Path) -> str:
    """A problem file that is ``problem`` with its ``get_test_cases()`` as its cases.

    The original source runs in the new module's own namespace, so the runner's per-case constants
    reach ``get_inputs()`` exactly as they would in the original file.
    """
    return (f'"""{problem}, with its small get_test_cases() as the cases (ladder suite --quick)."""\n'
            "from pathlib import Path as _Path\n\n"
            f"_ORIGINAL = _Path({str(problem.resolve())!r})\n"
            'exec(compile(_ORIGINAL.read_text(), str(_ORIGINAL), "exec"))\n'
            "get_cases = get_test_cases  # noqa: F821 (defined by the original)\n")


@contextlib.contextmanager
def quick_problems(operators: list[Operator]) -> Iterator[dict[str, Path]]:
    """Temporary problem files with the small test cases, by operator key."""
    with tempfile.TemporaryDirectory(prefix="ladder-suite-") as folder:
        paths = {}
        for op in operators:
            path = Path(folder) / f"level{op.level}" / op.folder.name / "problem.py"
            path.parent.mkdir(parents=True)
            path.write_text(quick_problem_source(op.problem))
            paths[op.key] = path
        yield paths


# ---------------------------------------------------------------------------------- precompiling


def precompile(pairs: list[tuple[Path, Path]], target: str, jobs: int,
               timeout_s: float = 900.0) -> dict[str, Any]:
    """Compile every kernel that the (solution, problem) pairs launch on any case, in parallel.

    Run in ``jobs`` processes through the runner's aot backend before the timed run: the kernels land
    in Triton's on-disk cache under the key the JIT computes on the device, so the run finds them
    there instead of compiling the suite's hundred-odd specializations one at a time, between
    timings, on one core. Purely an accelerator: a kernel that fails here fails again, and is
    reported, in the run itself. Returns, per solution: how many kernels were compiled, the errors,
    the cases that launched a kernel and each kernel's shared memory.
    """
    started = time.monotonic()
    groups = [pairs[index::jobs] for index in range(min(jobs, len(pairs)))]
    processes = [subprocess.Popen([sys.executable, "-m", "diagnoser.suite", target,
                                   *(str(path) for pair in group for path in pair)],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
                 for group in groups]
    results: dict[str, Any] = {}
    deadline = time.monotonic() + timeout_s
    for process in processes:
        try:
            stdout, _ = process.communicate(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            stdout, _ = process.communicate()
        for line in stdout.splitlines():
            with contextlib.suppress(json.JSONDecodeError):
                entry = json.loads(line)
                results[entry.pop("solution")] = entry
    return {"target": target, "jobs": len(groups), "elapsed_s": round(time.monotonic() - started, 2),
            "solutions": results}


def compile_kernels(solution: Path, problem: Path, target: str) -> list[Any]:
    """Every kernel ``solution`` launches on any case of ``problem``, compiled for ``target`` with no
    device, through the runner's aot backend (the JIT's own specialization of each launch).

    Compile only: the capture's description of each kernel for rung 3 (SASS through nvdisasm, a
    second ptxas run for the spill report) is left out; it costs more than the compile itself.
    """
    from runner.backends import aot
    from runner.capture import CapturedKernel

    def bare_record(kernel: Any, jit_fn: Any, *, config: dict | None = None, **_: Any) -> CapturedKernel:
        meta = kernel.metadata
        return CapturedKernel(name=kernel.name, function=f"{jit_fn.fn.__module__}.{jit_fn.fn.__qualname__}",
                              file=None, line=None, backend="aot", target=target, signature={}, constexprs={},
                              attrs={}, stages={}, resources={}, config=config,
                              metadata={"hash": meta.hash, "shared": meta.shared, "num_warps": meta.num_warps})

    describe, aot.nvidia_record = aot.nvidia_record, bare_record
    try:
        return aot.capture(solution, problem, target=target)
    finally:
        aot.nvidia_record = describe


def _compile_main(argv: list[str]) -> int:
    """``python -m diagnoser.suite TARGET SOLUTION PROBLEM [SOLUTION PROBLEM ...]`` (``precompile``)."""
    target, paths = argv[0], argv[1:]
    for solution, problem in zip(paths[::2], paths[1::2]):
        try:
            kernels = compile_kernels(Path(solution), Path(problem), target)
            entry = {"kernels": len(kernels), "errors": [f"{k.label}: {k.error}" for k in kernels if k.error],
                     "cases": sorted({launch["case"] for k in kernels for launch in k.launches}),
                     "shared_bytes": {k.label: k.metadata.get("shared") for k in kernels if not k.error}}
        except Exception as error:  # reported, never fatal: the run will meet the same error
            first = str(error).splitlines()[0] if str(error) else ""
            entry = {"kernels": 0, "errors": [f"{type(error).__name__}: {first}"]}
        print(json.dumps({"solution": solution, **entry}), flush=True)
    return 0


def device_target() -> str | None:
    """``sm90`` for the visible CUDA device (what the JIT compiles for), None without one."""
    import torch

    if not torch.cuda.is_available():
        return None
    major, minor = torch.cuda.get_device_capability()
    return f"sm{major}{minor}"


# ------------------------------------------------------------------------------ one evaluation


def interpreter_needs_fresh_process(backend: str | None) -> bool:
    """Whether an interpreter run must happen in a new process.

    ``TRITON_INTERPRET`` is read when ``@triton.jit`` decorates, and Triton's own standard library
    (``tl.zeros``, ``tl.sigmoid``, ...) is decorated when ``triton.language`` is imported: once that
    happened without it, interpreted kernels calling those functions fail in this process.
    """
    from runner.backends import select_backend

    if select_backend(backend).name != "interpret":
        return False
    standard = sys.modules.get("triton.language.standard")
    return standard is not None and type(standard.zeros).__name__ != "InterpretedFunction"


@dataclass
class BenchSettings:
    """How each operator is evaluated (``runner.options.Options`` fields, plus where it runs)."""

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
    """The runner's flat record (``runner.bench.bench_pair``) of one solution against its problem.

    In-process by default: the suite's own solutions are trusted code, and one Python process for
    the whole suite saves a worker start (torch + triton imports, device context) per operator.
    ``isolate`` runs each evaluation in the runner's worker subprocess instead, as does an
    interpreter run that this process can no longer set up.
    """
    from runner.bench import BenchError, bench_pair, flat_record

    if settings.isolate or interpreter_needs_fresh_process(settings.backend):
        return bench_pair(solution, problem, backend=settings.backend, timeout=settings.timeout_s,
                          progress=progress, **settings.options())
    from runner import worker
    from runner.options import Options

    request = {
        "problem": str(problem.resolve()),
        "solutions": {"solution": str(solution.resolve())},
        "backend": settings.backend or "auto",
        "options": asdict(Options(**settings.options())),
    }
    result = worker.run(request, progress)
    if "error" in result:
        raise BenchError(result["error"]["reason"])
    for report in result["solutions"].values():
        report["ok"] = bool(report["ok"])
    return flat_record(result, "solution")


# ------------------------------------------------------------------- records -> rows -> summary


def geomean(values: list[float]) -> float | None:
    values = [value for value in values if value is not None and value > 0]
    return statistics.geometric_mean(values) if values else None


def median(values: list[float]) -> float | None:
    values = [value for value in values if value is not None]
    return statistics.median(values) if values else None


def case_row(case: dict[str, Any]) -> dict[str, Any]:
    """One case of a runner record, reduced to what the suite reports."""
    time_ms = case.get("time_ms") or {}
    initial_ms, eager_ms = time_ms.get("median"), case.get("reference_ms")
    roofline_pct = case.get("roofline_pct")
    # Same floor for both (the problem's flops/bytes): eager's position follows from the ratio.
    eager_roofline_pct = (roofline_pct * initial_ms / eager_ms
                          if roofline_pct is not None and initial_ms and eager_ms else None)
    row = {
        "case": case.get("case"),
        "label": case.get("label"),
        "params": case.get("params"),
        "correct": bool(case.get("correct")),
        "initial_ms": initial_ms,
        "initial_p10_ms": time_ms.get("p10"),
        "initial_p90_ms": time_ms.get("p90"),
        "eager_ms": eager_ms,
        "speedup_vs_eager": case.get("speedup"),
        "roofline_pct": roofline_pct,
        "eager_roofline_pct": eager_roofline_pct,
        "gbps": case.get("gbps"),
        "tflops": case.get("tflops"),
        "flops": case.get("flops"),
        "bytes": case.get("bytes"),
        "max_rel_err": case.get("max_rel_err"),
        "rtol": case.get("rtol"),
        "launches": case.get("launches"),
        "kernels": case.get("kernels"),
        "flags": case.get("flags") or [],
    }
    if not row["correct"]:
        row["reason"] = case.get("reason")
    return row


def operator_row(op: Operator, record: dict[str, Any]) -> dict[str, Any]:
    """An operator's row: per-case figures and their geometric means over the timed cases."""
    cases = [case_row(case) for case in record.get("cases", [])]
    timed = [case for case in cases if case["correct"] and case["initial_ms"] and case["eager_ms"]]
    row = {
        "operator": op.key,
        "level": op.level,
        "number": op.number,
        "name": op.name,
        "ok": bool(record.get("ok")),
        "base_seed": record.get("base_seed"),
        "cases_correct": sum(case["correct"] for case in cases),
        "cases": cases,
        "initial_ms": geomean([case["initial_ms"] for case in timed]),
        "eager_ms": geomean([case["eager_ms"] for case in timed]),
        "speedup_vs_eager": geomean([case["speedup_vs_eager"] for case in timed]),
        "roofline_pct": geomean([case["roofline_pct"] for case in timed]),
        "eager_roofline_pct": geomean([case["eager_roofline_pct"] for case in timed]),
    }
    rejected = record.get("rejected")
    if rejected:
        row["rejected"] = rejected
    if record.get("device_error"):
        row["device_error"] = record["device_error"]
    return row


def failed_row(op: Operator, reason: str) -> dict[str, Any]:
    """The row of an operator whose evaluation could not run at all (broken problem file, ...)."""
    return {"operator": op.key, "level": op.level, "number": op.number, "name": op.name, "ok": False,
            "cases_correct": 0, "cases": [], "initial_ms": None, "eager_ms": None,
            "speedup_vs_eager": None, "roofline_pct": None, "eager_roofline_pct": None,
            "error": reason}


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Across operators: geometric mean and median of the per-operator figures.

    Only operators correct on every case and timed count; the others are listed by name.
    """
    def over(selected: list[dict[str, Any]]) -> dict[str, Any]:
        counted = [row for row in selected if row["ok"] and row["speedup_vs_eager"] is not None]
        speedups = [row["speedup_vs_eager"] for row in counted]
        roofline = [row["roofline_pct"] for row in counted]
        return {
            "operators": len(selected),
            "correct": sum(row["ok"] for row in selected),
            "counted": len(counted),
            "speedup_vs_eager_geomean": geomean(speedups),
            "speedup_vs_eager_median": median(speedups),
            "roofline_pct_geomean": geomean(roofline),
            "roofline_pct_median": median(roofline),
            "eager_roofline_pct_geomean": geomean([row["eager_roofline_pct"] for row in counted]),
        }

    summary = over(rows)
    summary["by_level"] = {str(level): over([row for row in rows if row["level"] == level])
                           for level in sorted({row["level"] for row in rows})}
    summary["not_counted"] = [row["operator"] for row in rows
                              if not (row["ok"] and row["speedup_vs_eager"] is not None)]
    return summary


# ----------------------------------------------------------------------------------- rendering


def _fmt(value: float | None, template: str) -> str:
    return "-" if value is None else template.format(value)


def render(rows: list[dict[str, Any]], summary: dict[str, Any], meta: dict[str, Any],
           per_case: bool = False) -> str:
    """The terminal table: one line per operator (and per case), then the summary and what went wrong."""
    header = ["operator", "cases", "initial ms", "eager ms", "eager/initial", "% roof", "eager % roof"]
    table = [header]
    for row in rows:
        total = len(row["cases"]) or "-"
        table.append([
            row["operator"],
            f"{row['cases_correct']}/{total}",
            _fmt(row["initial_ms"], "{:.4g}"),
            _fmt(row["eager_ms"], "{:.4g}"),
            _fmt(row["speedup_vs_eager"], "{:.2f}x"),
            _fmt(row["roofline_pct"], "{:.1f}"),
            _fmt(row["eager_roofline_pct"], "{:.1f}"),
        ])
        if per_case:
            table += [[f"  {case['label']}", "ok" if case["correct"] else "NO",
                       _fmt(case["initial_ms"], "{:.4g}"), _fmt(case["eager_ms"], "{:.4g}"),
                       _fmt(case["speedup_vs_eager"], "{:.2f}x"), _fmt(case["roofline_pct"], "{:.1f}"),
                       _fmt(case["eager_roofline_pct"], "{:.1f}")] for case in row["cases"]]
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    lines = [f"ladder suite on {meta.get('backend')} ({meta.get('device') or 'unknown device'}); "
             "ms and ratios are geometric means over each operator's cases"]
    for position, line in enumerate(table):
        cells = [cell.ljust(width) if i == 0 else cell.rjust(width)
                 for i, (cell, width) in enumerate(zip(line, widths))]
        lines.append("  ".join(cells))
        if position == 0:
            lines.append("  ".join("-" * width for width in widths))
    lines.append("")
    scopes = [("all", summary)] + [(f"level {level}", part) for level, part in summary["by_level"].items()]
    for scope, part in scopes:
        line = f"{scope:>8}: {part['correct']}/{part['operators']} operators correct on every case"
        if meta.get("timed"):
            line += (f"; eager/initial geomean {_fmt(part['speedup_vs_eager_geomean'], '{:.3f}x')}, "
                     f"median {_fmt(part['speedup_vs_eager_median'], '{:.3f}x')}; % of roofline geomean "
                     f"{_fmt(part['roofline_pct_geomean'], '{:.1f}')}, median "
                     f"{_fmt(part['roofline_pct_median'], '{:.1f}')} (eager "
                     f"{_fmt(part['eager_roofline_pct_geomean'], '{:.1f}')}) over {part['counted']} timed")
        lines.append(line)
    for row in rows:
        for problem in _problems(row):
            lines.append(f"{row['operator']}: {problem}")
    compiled = meta.get("precompile")
    if compiled:
        entries = compiled["solutions"].values()
        lines.append(f"precompiled {sum(entry['kernels'] for entry in entries)} kernels for {compiled['target']} "
                     f"in {compiled['elapsed_s']} s ({compiled['jobs']} processes)")
        lines += [f"precompile: {error}" for entry in entries for error in entry["errors"]]
    if meta.get("stopped"):
        lines.append(f"stopped: {meta['stopped']}")
    if meta.get("elapsed_s") is not None:
        lines.append(f"suite time: {meta['elapsed_s']} s")
    if not meta.get("timed"):
        lines.append("not timed: this backend checks correctness only")
    return "\n".join(lines)


def _problems(row: dict[str, Any]) -> list[str]:
    if row.get("error"):
        return [row["error"]]
    problems = []
    if row.get("rejected"):
        problems.append(f"rejected ({row['rejected']['stage']}): {row['rejected']['reason']}")
    elif not row["ok"]:
        problems += [f"case {case['label']}: {case.get('reason')}" for case in row["cases"] if not case["correct"]]
    if row.get("device_error"):
        problems.append(f"device error: {row['device_error']}")
    return problems


# ------------------------------------------------------------------------------------ the loop


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
    from runner.backends import BackendError, select_backend

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
    from runner.bench import BenchError

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
    temporary.write_text(json.dumps(document, indent=1, default=_json_default) + "\n")
    temporary.replace(path)


def load_document(path: Path) -> dict[str, Any]:
    """A document written by ``--output`` or ``--json``; a clear usage error for anything else."""
    try:
        document = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as error:
        raise click.UsageError(f"{path}: not a suite JSON document ({error})") from None
    if not isinstance(document, dict) or not {"meta", "summary", "operators"} <= set(document):
        raise click.UsageError(f"{path}: not a suite JSON document (needs meta, summary and operators)")
    return document


def _json_default(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return str(value)


# --------------------------------------------------------------------------------- command line


def _one_line(row: dict[str, Any]) -> str:
    if not row["ok"]:
        return f"{row['operator']}: FAILED ({(_problems(row) or ['not correct'])[0]})"
    if row["initial_ms"] is None:
        return f"{row['operator']}: correct on {row['cases_correct']} cases, not timed ({row['elapsed_s']} s)"
    return (f"{row['operator']}: ok, initial {_fmt(row['initial_ms'], '{:.4g}')} ms, eager "
            f"{_fmt(row['eager_ms'], '{:.4g}')} ms, eager/initial {_fmt(row['speedup_vs_eager'], '{:.2f}x')}, "
            f"{_fmt(row['roofline_pct'], '{:.1f}')}% of roofline ({row['elapsed_s']} s)")


@click.command("suite")
@click.option("--level", type=click.Choice(["1", "2"]), help="Only this KernelBench level.")
@click.option("--only", multiple=True, metavar="NAME",
              help="Only this operator (level1/23_softmax, 23_softmax, softmax or 23); repeatable.")
@click.option("--backend", type=click.Choice(["cuda", "npu", "interpret"]),
              help="Where to run; default: cuda if available, else npu, else interpret (CPU, no timing).")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON on stdout instead of the table.")
@click.option("--output", "output", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the JSON results to this file (rewritten after every operator).")
@click.option("--quick", is_flag=True,
              help="Use each problem's small get_test_cases() instead of its cases (a smoke test; "
                   "with --backend interpret, the suite's correctness check on a CPU).")
@click.option("--seeds", type=click.IntRange(1), default=DEFAULT_SEEDS, show_default=True,
              help="Fresh random inputs per case for the correctness check.")
@click.option("--seed", type=int, help="Base seed (default: a fresh one, recorded in the JSON).")
@click.option("--budget", "budget_s", type=click.FloatRange(0, min_open=True), default=DEFAULT_BUDGET_S,
              show_default=True, help="Timing budget in seconds per contestant and case.")
@click.option("--min-reps", type=click.IntRange(1), default=DEFAULT_MIN_REPS, show_default=True,
              help="At least this many timed repetitions per contestant and case.")
@click.option("--no-time", is_flag=True, help="Correctness only.")
@click.option("--per-case", is_flag=True, help="Show every case under its operator in the table.")
@click.option("--show", "show", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Print the table of a saved --output/--json document instead of running the suite.")
@click.option("--precompile/--no-precompile", default=True, show_default=True,
              help="On CUDA, compile every kernel of every case in parallel processes before the run.")
@click.option("--isolate", is_flag=True,
              help="Evaluate each operator in its own worker subprocess (survives crashes, slower).")
@click.option("--timeout", "timeout_s", type=float, default=600.0, show_default=True,
              help="With --isolate: wall-clock limit per operator, in seconds.")
@click.option("--diagnose", is_flag=True,
              help="Diagnose every operator instead (the ladder of `ladder diagnose`, device work batched): "
                   "a table of the rung each reached and its findings.")
def suite(level: str | None, only: tuple[str, ...], backend: str | None, as_json: bool, output: Path | None,
          quick: bool, seeds: int, seed: int | None, budget_s: float, min_reps: int, no_time: bool,
          per_case: bool, show: Path | None, precompile: bool, isolate: bool, timeout_s: float,
          diagnose: bool) -> None:
    """Bench every operator of the kernel suite: the initial Triton solution against PyTorch eager.

    Prints one row per operator (geometric means over its cases: initial and eager milliseconds,
    eager/initial, % of the roofline) and the geometric mean and median across operators. Exit
    status 0 when every operator is correct on every case, 1 otherwise, 2 on a usage error.
    """
    if show is not None:
        document = load_document(show)
        click.echo(render(document["operators"], document["summary"], document["meta"], per_case=per_case))
        return
    try:
        operators = discover(level=int(level) if level else None, only=only)
        check_backend(backend)
    except SuiteError as error:
        raise click.UsageError(str(error)) from None
    if diagnose:
        from diagnoser.batch import suite_command

        sys.exit(suite_command(operators, backend, as_json, output, isolate=isolate, echo=click.echo,
                               err=lambda line: click.echo(line, err=True)))
    settings = BenchSettings(backend=backend, isolate=isolate, precompile=precompile, timeout_s=timeout_s,
                             seeds=seeds, seed=seed,
                             time=not no_time, budget_s=budget_s, min_reps=min_reps,
                             max_reps=max(min_reps, DEFAULT_MAX_REPS))
    interactive = sys.stderr.isatty()
    with click.progressbar(length=len(operators), label="ladder suite", file=sys.stderr,
                           show_pos=True, item_show_func=lambda text: text) as bar:
        def on_progress(op: Operator, event: dict) -> None:
            if interactive and event.get("message"):
                bar.update(0, f"{op.key}: {event['message']}"[:70])
            elif event.get("stage") == "precompile":
                click.echo(event["message"], err=True)

        def on_operator(row: dict[str, Any], meta: dict[str, Any]) -> None:
            finished.append(row)
            if output is not None:
                write_json(output, report(finished, meta))
            bar.update(1, row["operator"])
            if not interactive:
                click.echo(f"[{len(finished)}/{len(operators)}] {_one_line(row)}", err=True)

        finished: list[dict[str, Any]] = []
        try:
            rows, meta = run_suite(operators, settings, quick=quick, on_progress=on_progress,
                                   on_operator=on_operator)
        except SuiteError as error:
            raise click.UsageError(str(error)) from None
    document = report(rows, meta)
    if output is not None:
        write_json(output, document)
    if as_json:
        click.echo(json.dumps(document, indent=1, default=_json_default))
    else:
        click.echo(render(rows, document["summary"], meta, per_case=per_case))
    sys.exit(0 if all(row["ok"] for row in rows) else 1)


if __name__ == "__main__":
    sys.exit(_compile_main(sys.argv[1:]))
