"""The judge: a problem, one or more solutions and a backend in, a JSON-able verdict out.

This runs in the judge's process (``ladder.runner.worker``), which never imports or runs candidate code.
Each solution runs in a contestant process of its own (``ladder.runner.contestant``); the judge draws the
seeds, computes the reference, compares what the contestants return, times them interleaved with
the reference (which runs in a contestant process of its own too, with no candidate code) and
writes the verdict. A candidate can crash, hang, tamper with its own process or lie in its
replies: it only ever loses its own verdict.

The pipeline is an ordered table of named stages over one ``Evaluation`` (``STAGES``), and each
case an ordered table of its own (``CASE_STAGES``):

``static``       parse each solution, and the modules beside it that it imports, and run the
                 static rules (``ladder.runner.static_check``); an error rejects the solution before any
                 of its code runs.
``load``         import the problem here (the reference is trusted code).
``contestants``  start one contestant per solution (all at once); it imports the solution under
                 the guards.
per case (``ladder.runner.case``):
``prepare``      the case's init inputs from a drawn seed, the reference ``Model`` here and every
                 ``ModelNew`` in its contestant from the same seed; when the parameter names and
                 shapes agree, each candidate gets the reference's parameters, so initialisation
                 order cannot make a correct kernel fail.
``check``        for each fresh seed: every contestant runs one forward on inputs made from it
                 (guarded, fresh allocations poisoned) and writes its outputs to a file named
                 here; the judge makes the same inputs, runs the reference in float64 (or its own
                 precision, see ``Reference``) and in its own precision, and ``ladder.runner.compare``
                 and the guards' reports decide. Each outputs file is removed as soon as it is
                 read, so no other contestant finds it.
``time``         the eager reference, the optional ``torch.compile`` of it, and every candidate
                 correct on the case, interleaved on the same fresh inputs (``ladder.runner.timing``),
                 with the host-side bound and the roofline floor checked.

A guard violation (torch compute in forward, no Triton launch, outputs not written by a kernel,
side streams or threads, tampering, a timed call returning a stale or wrong result) rejects the
whole solution. A wrong value, a crash or an exception in forward fails the case. A contestant
that dies, hangs or passes a limit is rejected with the reason, and the others go on.

The judge and every contestant share one device. After each case stage the judge gives back the
device memory its allocator cached, and each contestant does before it builds the next case, so
no process holds memory it has stopped using while another needs it. A call that runs out of
device memory anyway sets its solution aside (``OUT_OF_MEMORY``) instead of failing it: the memory
may have been anyone's.
"""
from __future__ import annotations

import hashlib
import random
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ladder.runner import roofline, sandbox, seeds
from ladder.runner.case import CASE_STAGES, CaseRun
from ladder.runner.evaluation import Candidate, DeviceLost, Emit, Evaluation, new_contestant
from ladder.runner.options import Options
from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)
from ladder.runner.precompile import compile_target
from ladder.runner.problem import (
    QUICK_MAX_ELEMENTS,
    ProblemError,
    case_label,
    input_elements,
    load_problem,
)
from ladder.runner.static_check import ERROR, check_solution

RUNNER = Path(__file__).resolve().parent


def evaluate(problem_path: str, solutions: dict[str, str], backend: Any, options: Options,
             emit: Emit = lambda event: None) -> dict[str, Any]:
    """Judge solutions against a problem on a backend. See the module docstring for the stages."""
    started = time.time()
    exchange = Path(tempfile.mkdtemp(prefix="ladder-judge-", dir=_scratch_root()))
    evaluation = Evaluation(
        problem_path=problem_path, backend=backend, options=options, emit=emit, exchange=exchange,
        candidates=[Candidate(name, Path(path).resolve()) for name, path in solutions.items()],
        base_seed=options.seed if options.seed is not None else seeds.draw(),
        token=f"judge-{random.SystemRandom().getrandbits(64):016x}", sandboxed=options.contestants == "process")
    try:
        for name, stage in STAGES.items():
            began = time.monotonic()
            stage(evaluation)
            evaluation.add_seconds(name, time.monotonic() - began)
    finally:
        for handle in [c.handle for c in evaluation.candidates if c.handle] + [evaluation.reference_timer]:
            if handle is not None:
                handle.stop(evaluation.token)
        if evaluation.tracer is not None:
            evaluation.tracer.uninstall()
        if evaluation.sandboxed:
            sandbox.kill_evaluation(None, evaluation.token)
        shutil.rmtree(exchange, ignore_errors=True)
    if evaluation.runner_digest and evaluation.runner_digest != runner_digest(evaluation.problem_path):
        for candidate in evaluation.candidates:
            candidate.rejected = {"stage": "runtime", "reason": "the runner's own files or the problem file changed "
                                  "on disk while candidates ran: no verdict of this run can be trusted"}
    problem = evaluation.problem
    return {
        "problem": str(problem.path) if problem else problem_path,
        "backend": backend.name,
        "device": evaluation.device_name,
        "device_uuid": evaluation.backend.device_uuid(),
        "timed": evaluation.timed,
        "ceilings": evaluation.ceilings,
        "base_seed": evaluation.base_seed,
        "seeds_per_case": options.seeds,
        "contestants": options.contestants,
        "cases": evaluation.case_reports,
        "device_error": evaluation.device_error,
        "solutions": {c.name: c.report(evaluation.indexes, problem) for c in evaluation.candidates},
        "elapsed_s": round(time.time() - started, 3),
        "stage_seconds": evaluation.stage_seconds,
    }


def static(evaluation: Evaluation) -> None:
    evaluation.runner_digest = runner_digest(evaluation.problem_path)
    for candidate in evaluation.candidates:
        evaluation.emit({"event": "progress", "solution": candidate.name, "stage": "static",
                         "message": f"static checks of {candidate.path.name}"})
        try:
            violations = check_solution(candidate.path)
        except OSError as error:
            candidate.reject("load", f"cannot read {error.filename}: {error.strerror}")
            continue
        except SyntaxError as error:
            candidate.reject("load", f"{Path(error.filename or candidate.path).name}:{error.lineno}: "
                                     f"SyntaxError: {error.msg}")
            continue
        candidate.static = [violation.to_dict() for violation in violations]
        errors = [violation for violation in violations if violation.severity == ERROR]
        if evaluation.options.static_checks and errors:
            more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
            candidate.reject("static", f"{errors[0]}{more}")


def load(evaluation: Evaluation) -> None:
    evaluation.emit({"event": "progress", "stage": "load", "message": f"loading {Path(evaluation.problem_path).name}"})
    problem = evaluation.problem = load_problem(evaluation.problem_path, quick=evaluation.options.quick)
    evaluation.emit({"event": "problem", "cases": [{"case": index, "params": case, "label": case_label(case)}
                                                   for index, case in enumerate(problem.cases)]})
    if problem.shrunk_from:
        sizes = ", ".join(f"{key} {value} -> {problem.cases[0][key]}" for key, value in problem.shrunk_from.items())
        evaluation.emit({"event": "warning", "case": 0, "message": (
            f"{Path(evaluation.problem_path).name} has no get_test_cases(): its case is shrunk for a quick run "
            f"({sizes}); results hold for these sizes, not the file's")})
    indexes = evaluation.options.cases if evaluation.options.cases is not None else list(range(len(problem.cases)))
    for index in indexes:
        if not 0 <= index < len(problem.cases):
            raise ProblemError(f"{problem.path.name}: no case {index} (it has {len(problem.cases)})")
    evaluation.indexes = indexes
    if evaluation.backend.name == "interpret":
        warn_of_large_cases(evaluation)
    evaluation.device_name = evaluation.backend.device_name()
    evaluation.timed = evaluation.options.time and evaluation.backend.can_time
    evaluation.ceilings = roofline.load_ceilings(evaluation.device_name) if evaluation.timed else None


def warn_of_large_cases(evaluation: Evaluation) -> None:
    """Under the interpreter, say before the run which cases are past what it runs in seconds."""
    problem = evaluation.problem
    for index in evaluation.indexes:
        elements = input_elements(problem, problem.cases[index])
        if elements is not None and elements > QUICK_MAX_ELEMENTS:
            evaluation.emit({"event": "warning", "case": index, "elements": elements, "message": (
                f"case {index} ({case_label(problem.cases[index])}) has {elements:,} input elements: under "
                f"Triton's interpreter, on the CPU, it can run for many minutes (over {QUICK_MAX_ELEMENTS:,} "
                "elements; a get_test_cases() of small sizes in the problem file is what the interpreter runs)")})


def start_contestants(evaluation: Evaluation) -> None:
    if not evaluation.sandboxed:
        from ladder.runner.guards import LaunchTracer

        evaluation.tracer = LaunchTracer(evaluation.backend.launch_hook_fires, evaluation.backend.current_stream)
        evaluation.tracer.install()
    starting = [candidate for candidate in evaluation.candidates if candidate.rejected is None]
    for candidate in starting:
        candidate.handle = new_contestant(evaluation, candidate.name, solution=candidate.path)
    # Starting a contestant (torch, Triton, the solution) is most of a short evaluation: all import at once.
    evaluation.emit({"event": "progress", "stage": "load", "message": f"importing {len(starting)} solution(s)"})
    replies = evaluation.request_all(starting, lambda candidate: {
        "op": "load", "problem": str(evaluation.problem.path), "solution": str(candidate.path),
        "quick": evaluation.options.quick, "exchange": str(evaluation.exchange),
        "guards": evaluation.options.guards})
    for candidate in starting:
        if "error" in (replies.get(candidate.name) or {}):
            candidate.reject("load", replies[candidate.name]["error"])
    target = compile_target(evaluation.backend) if evaluation.options.precompile else None
    if target is not None:
        evaluation.emit({"event": "progress", "stage": "precompile", "message": f"compiling for {target} in parallel"})
        evaluation.request_all([c for c in starting if c.active],
                               lambda c: {"op": "precompile", "solution": str(c.path), "target": target,
                                          "problem": str(evaluation.problem.path)}, optional=True)




def cases(evaluation: Evaluation) -> None:
    try:
        for index in evaluation.indexes:
            case = CaseRun(evaluation, index)
            for name, stage in CASE_STAGES.items():
                began = time.monotonic()
                stage(case)
                evaluation.backend.release_cached_memory()  # the contestants' next stage may need it
                evaluation.add_seconds(f"case {name}", time.monotonic() - began)
            evaluation.case_reports.append(case.report)
            del case  # its reference model and inputs go before the next case's are made
            evaluation.backend.release_cached_memory()
    except DeviceLost as error:
        evaluation.device_error = str(error)


STAGES: dict[str, Callable[[Evaluation], None]] = {
    "static": static,
    "load": load,
    "contestants": start_contestants,
    "cases": cases,
}


def runner_digest(problem_path: str) -> str:
    """A hash of the runner's own source and the problem file: they must not change during a run."""
    digest = hashlib.sha256()
    for path in sorted(RUNNER.rglob("*.py")) + [Path(problem_path)]:
        try:
            digest.update(path.read_bytes())
        except OSError:
            digest.update(b"missing")
    return digest.hexdigest()


def _scratch_root() -> str | None:
    """Where the judge's exchange files go: shared memory when there is room, else the temp folder."""
    shm = Path("/dev/shm")
    try:
        if shm.is_dir() and shutil.disk_usage(shm).free > 8 << 30:
            return str(shm)
    except OSError:
        pass
    return None
