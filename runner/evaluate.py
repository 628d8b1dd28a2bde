"""One evaluation: a problem, one or more solutions and a backend in, a JSON-able result out.

This runs inside the worker process (``runner.worker``), never in the caller: candidate code is
imported and executed here. The stages, in order:

``static``   parse each solution and run the static rules (``runner.static_check``); an error
             rejects the solution before any of its code runs.
``load``     import the problem and the solutions (syntax and import errors become reasons).
per case:
``prepare``  the case's init inputs (seeded), the reference ``Model`` and every ``ModelNew`` built
             from the same seed; when the parameter names and shapes agree, the candidate gets the
             reference's parameters, so initialisation order cannot make a correct kernel fail.
``check``    for each fresh seed: new inputs; each candidate runs first (its own copy of the inputs,
             under the launch tracer and the torch-call recorder, fresh allocations poisoned); then the
             reference in float64 (or its own precision, see ``Reference``) and in its own precision;
             then ``runner.compare`` and the runtime guards decide.
``time``     the eager reference, the optional ``torch.compile`` of it, and every candidate that was
             correct on the case, interleaved on the same fresh inputs (``runner.timing``); timed
             outputs are verified on a random subset of repetitions.

A guard violation (torch compute in forward, no Triton launch, outputs not written by a kernel,
side streams or threads, a timed call returning a stale or wrong result) rejects the whole solution.
A wrong value, a crash or an exception in forward fails the case. A device error that leaves the
device unusable (illegal memory access) ends the evaluation; the worker reports what it had.
"""
from __future__ import annotations

import secrets
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

import torch

from runner import roofline, timing
from runner.compare import Verdict, compare, flatten_outputs
from runner.errors import one_line
from runner.guards import LaunchTracer, TorchOpRecorder, poison, storage_span
from runner.options import Options
from runner.inputs import changed, clone, make_init_inputs, make_inputs, seed_everything, tensor_bytes
from runner.problem import Problem, ProblemError, case_label, load_problem, load_solution
from runner.reference import Reference, tf32
from runner.static_check import ERROR, check_source

Emit = Callable[[dict], None]


class DeviceLost(Exception):
    """The device is unusable after a candidate's error (e.g. an illegal memory access)."""


@dataclass
class CaseOutcome:
    """One solution on one case. ``correct`` stays None until every seed has passed."""

    case: int
    params: dict[str, Any]
    label: str
    correct: bool | None = None
    reason: str | None = None
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    rtol: float | None = None
    seeds: list[int] = field(default_factory=list)
    launches: int | None = None
    kernels: list[str] = field(default_factory=list)
    time_ms: dict[str, float] | None = None
    verified_timed_calls: int = 0
    speedup: float | None = None
    speedup_vs_compile: float | None = None
    gbps: float | None = None
    tflops: float | None = None
    roofline_pct: float | None = None
    flags: list[str] = field(default_factory=list)

    def fail(self, reason: str) -> None:
        if self.correct is not False:
            self.correct, self.reason = False, reason

    def absorb(self, verdict: Verdict) -> None:
        for key in ("max_abs_err", "max_rel_err", "rtol"):
            value = getattr(verdict, key)
            if value is not None and (getattr(self, key) is None or value > getattr(self, key)):
                setattr(self, key, value)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["correct"] = bool(self.correct)
        if self.correct:
            data.pop("reason")
        return data


@dataclass
class Candidate:
    """A solution under evaluation."""

    name: str
    path: Path
    model_class: type | None = None
    static: list[dict] = field(default_factory=list)
    rejected: dict[str, str] | None = None
    cases: dict[int, CaseOutcome] = field(default_factory=dict)
    # Storage (start, size) of the outputs of the last checked call, to recognise a returned stale buffer.
    last_outputs: list[tuple[int, int]] = field(default_factory=list)

    @property
    def active(self) -> bool:
        return self.rejected is None and self.model_class is not None

    def reject(self, stage: str, reason: str) -> None:
        if self.rejected is None:
            self.rejected = {"stage": stage, "reason": reason}

    def report(self, case_indexes: list[int], problem: Problem) -> dict[str, Any]:
        cases = []
        for index in case_indexes:
            outcome = self.cases.get(index) or CaseOutcome(index, problem.cases[index],
                                                           case_label(problem.cases[index]))
            if self.rejected is not None:
                outcome.fail(f"rejected ({self.rejected['stage']}): {self.rejected['reason']}")
            elif outcome.correct is None:
                outcome.fail("not evaluated")
            cases.append(outcome.to_dict())
        return {
            "name": self.name,
            "path": str(self.path),
            "ok": self.rejected is None and all(case["correct"] for case in cases),
            "rejected": self.rejected,
            "static": self.static,
            "cases": cases,
        }


def case_seed(base: int, case: int, draw: int) -> int:
    return (base + 7919 * case + 104729 * draw) % 2**31


# ------------------------------------------------------------------------------------ the pipeline


def evaluate(problem_path: str, solutions: dict[str, str], backend: Any, options: Options,
             emit: Emit = lambda event: None) -> dict[str, Any]:
    """Evaluate solutions against a problem on a backend. See the module docstring for the stages."""
    started = time.time()
    base_seed = options.seed if options.seed is not None else secrets.randbelow(2**31)
    candidates = [Candidate(name, Path(path).resolve()) for name, path in solutions.items()]
    for candidate in candidates:
        _static(candidate, options.static_checks, emit)
    emit({"event": "progress", "stage": "load", "message": f"loading {Path(problem_path).name}"})
    problem = load_problem(problem_path)
    emit({"event": "problem", "cases": [{"case": index, "params": case, "label": case_label(case)}
                                        for index, case in enumerate(problem.cases)]})
    for candidate in candidates:
        _load(candidate, emit)
    device_name = backend.device_name()  # asked now: after a device error the device may not answer
    tracer = LaunchTracer(backend.launch_hook_fires, backend.current_stream)
    tracer.install()
    timed = options.time and backend.can_time
    ceilings = roofline.load_ceilings(device_name) if timed else None
    indexes = options.cases if options.cases is not None else list(range(len(problem.cases)))
    for index in indexes:
        if not 0 <= index < len(problem.cases):
            raise ProblemError(f"{problem.path.name}: no case {index} (it has {len(problem.cases)})")
    case_reports = []
    device_error = None
    try:
        for index in indexes:
            case_reports.append(_evaluate_case(problem, index, candidates, backend, tracer, options,
                                               base_seed, ceilings, timed, emit))
    except DeviceLost as error:
        device_error = str(error)
    finally:
        tracer.uninstall()
    return {
        "problem": str(problem.path),
        "backend": backend.name,
        "device": device_name,
        "timed": timed,
        "ceilings": ceilings,
        "base_seed": base_seed,
        "seeds_per_case": options.seeds,
        "cases": case_reports,
        "device_error": device_error,
        "solutions": {candidate.name: candidate.report(indexes, problem) for candidate in candidates},
        "elapsed_s": round(time.time() - started, 3),
    }


def _static(candidate: Candidate, enabled: bool, emit: Emit) -> None:
    emit({"event": "progress", "solution": candidate.name, "stage": "static",
          "message": f"static checks of {candidate.path.name}"})
    try:
        text = candidate.path.read_text()
    except OSError as error:
        candidate.reject("load", f"cannot read {candidate.path}: {error.strerror}")
        return
    try:
        violations = check_source(text, candidate.path.name)
    except SyntaxError as error:
        candidate.reject("load", f"{candidate.path.name}:{error.lineno}: SyntaxError: {error.msg}")
        return
    candidate.static = [violation.to_dict() for violation in violations]
    errors = [violation for violation in violations if violation.severity == ERROR]
    if enabled and errors:
        more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
        candidate.reject("static", f"{errors[0]}{more}")


def _load(candidate: Candidate, emit: Emit) -> None:
    if candidate.rejected is not None:
        return
    emit({"event": "progress", "solution": candidate.name, "stage": "load",
          "message": f"importing {candidate.path.name}"})
    try:
        candidate.model_class = load_solution(candidate.path)
    except ProblemError as error:
        candidate.reject("load", str(error))


def _evaluate_case(problem: Problem, index: int, candidates: list[Candidate], backend: Any,
                   tracer: LaunchTracer, options: Options, base_seed: int, ceilings: dict | None,
                   timed: bool, emit: Emit) -> dict[str, Any]:
    case = problem.cases[index]
    label = case_label(case)
    device = backend.device()
    report: dict[str, Any] = {"case": index, "params": case, "label": label}
    for candidate in candidates:
        candidate.cases[index] = CaseOutcome(index, case, label)
    emit({"event": "progress", "stage": "prepare", "case": index,
          "message": f"case {index + 1}/{len(problem.cases)} ({label}): building models"})

    init_seed = case_seed(base_seed, index, 0)
    try:
        init_inputs = make_init_inputs(problem, case, init_seed, device)
        seed_everything(init_seed)
        # Parameters are created on the device: initialising large layers on the host costs seconds.
        with problem.applied(case), device:
            reference_model = problem.Model(*init_inputs).to(device)
    except Exception as error:
        raise ProblemError(f"{problem.path.name}: case {index}: building Model failed: {one_line(error)}") from error
    reference = Reference(reference_model, problem.allow_tf32)
    models = {}
    for candidate in candidates:
        if candidate.active:
            model = _build(candidate, candidate.cases[index], init_inputs, init_seed, reference_model,
                           device, backend)
            if model is not None:
                models[candidate.name] = model

    first_inputs = None
    previous_native = None
    for draw in range(options.seeds):
        seed = case_seed(base_seed, index, draw + 1)
        checking = [c for c in candidates if c.name in models and c.active and c.cases[index].correct is not False]
        if not checking:
            break
        emit({"event": "progress", "stage": "check", "case": index,
              "message": f"case {index + 1}/{len(problem.cases)} ({label}): correctness, seed {draw + 1}/{options.seeds}"})
        try:
            inputs = make_inputs(problem, case, seed, device)
        except Exception as error:
            raise ProblemError(f"{problem.path.name}: case {index}: get_inputs() failed: {one_line(error)}") from error
        if first_inputs is None:
            first_inputs = inputs
        outputs = {}
        for candidate in checking:
            candidate.cases[index].seeds.append(seed)
            emit({"event": "progress", "solution": candidate.name, "stage": "check", "case": index,
                  "message": ""})
            result = _run_checked(candidate, models[candidate.name], inputs, backend, tracer, index)
            if result is not None:
                outputs[candidate.name] = result
        emit({"event": "progress", "stage": "reference", "case": index, "message": ""})
        try:
            reference.prepare(inputs)
            expected, native, exact = reference.outputs(inputs)
        except Exception as error:
            raise ProblemError(f"{problem.path.name}: case {index}: the reference failed: {one_line(error)}") from error
        for candidate in checking:
            if candidate.name in outputs:
                output, mutated, violation = outputs[candidate.name]
                _judge(candidate, candidate.cases[index], draw, output, mutated, violation,
                       (expected, native, exact), previous_native, reference)
                for tensor in flatten_outputs(output):
                    if isinstance(tensor, torch.Tensor):
                        poison(tensor)
        previous_native = native

    for candidate in candidates:
        outcome = candidate.cases[index]
        if candidate.active and outcome.correct is None and outcome.seeds:
            outcome.correct = True

    report.update({
        "reference_precision": reference.precision,
        "allow_tf32": reference.allow_tf32,
    })
    if first_inputs is not None:
        with problem.applied(case):
            declared_bytes, flops = problem.bytes(case), problem.flops(case)
        report["bytes"] = declared_bytes if declared_bytes is not None else _estimated_bytes(
            first_inputs, reference_model, previous_native)
        report["bytes_source"] = "problem" if declared_bytes is not None else "estimate: inputs and parameters read once, outputs written once"
        report["flops"] = flops
        report["compute_dtype"] = str(_compute_dtype(first_inputs, reference_model)).replace("torch.", "")
    if timed and first_inputs is not None:
        _time_case(problem, index, case, candidates, models, reference, backend, tracer, options,
                   base_seed, ceilings, report, emit)
    return report


def _build(candidate: Candidate, outcome: CaseOutcome, init_inputs: list, init_seed: int,
           reference_model: torch.nn.Module, device: torch.device, backend: Any) -> torch.nn.Module | None:
    try:
        seed_everything(init_seed)
        with device:
            model = candidate.model_class(*init_inputs).to(device)
        _share_parameters(reference_model, model)
        return model
    except Exception as error:
        _raise_if_device_lost(backend, error, candidate)
        outcome.fail(f"ModelNew(*get_init_inputs()) failed: {one_line(error)}")
        return None


def _share_parameters(reference: torch.nn.Module, model: Any) -> None:
    """Give the candidate the reference's parameters when names and shapes agree exactly."""
    if not isinstance(model, torch.nn.Module):
        return
    ours, theirs = model.state_dict(), reference.state_dict()
    if ours.keys() == theirs.keys() and all(ours[k].shape == theirs[k].shape for k in ours):
        model.load_state_dict(theirs)


def _run_checked(candidate: Candidate, model: torch.nn.Module, inputs: list, backend: Any,
                 tracer: LaunchTracer, index: int) -> tuple[Any, list[int], str | None] | None:
    """One forward under the guards: (outputs, indexes of inputs it wrote, launch violation or None),
    or None when it raised or called torch compute ops (the candidate is then failed or rejected)."""
    outcome = candidate.cases[index]
    arguments = clone(inputs)
    recorder = TorchOpRecorder(tracer)
    tracer.stray.clear()
    try:
        with torch.no_grad(), tracer.watch(candidate.name) as window, recorder:
            output = model(*arguments)
        backend.synchronize()
    except Exception as error:
        _raise_if_device_lost(backend, error, candidate)
        outcome.fail(f"forward raised {one_line(error)}")
        if isinstance(error, torch.OutOfMemoryError):
            _release_memory(backend)
        return None
    outcome.launches = len(window.launches)
    outcome.kernels = sorted({launch.kernel for launch in window.launches})
    if recorder.compute_calls:
        calls = ", ".join(f"{name} x{count}" for name, count in sorted(recorder.compute_calls.items()))
        candidate.reject("runtime", f"forward calls torch compute ops: {calls}")
        return None
    outputs = [(position, tensor) for position, tensor in enumerate(flatten_outputs(output))
               if isinstance(tensor, torch.Tensor) and tensor.numel()]
    previous, candidate.last_outputs = candidate.last_outputs, [storage_span(t) for _, t in outputs]
    violation = next((f"returns output {position} of the previous call without writing it (output "
                      "cached across calls)" for position, tensor in outputs
                      if storage_span(tensor) in previous and not window.wrote(tensor)), None)
    violation = violation or timing.guard_violation(window, backend.current_stream())
    if violation is None and tracer.stray:
        violation = f"let {len(tracer.stray)} Triton launch(es) happen outside forward (a thread?)"
    if violation is None:
        for position, tensor in outputs:
            if not window.wrote(tensor):
                violation = (f"returns output {position}, which no Triton kernel wrote (its memory was "
                             "never passed to one)")
                break
    return output, changed(inputs, arguments), violation


def _judge(candidate: Candidate, outcome: CaseOutcome, draw: int, output: Any, mutated: list[int],
           violation: str | None, reference_outputs: tuple[Any, Any, bool], previous_native: Any,
           reference: Reference) -> None:
    """Decide one seed: a stale result or a launch violation rejects; a mismatch fails the case."""
    expected, native, exact = reference_outputs
    verdict = compare(output, expected, native, allow_tf32=reference.allow_tf32, expected_is_float64=exact)
    outcome.absorb(verdict)
    stale = (not verdict.ok and previous_native is not None
             and compare(output, previous_native, previous_native, allow_tf32=reference.allow_tf32,
                         expected_is_float64=False).ok)
    if stale:
        also = f"; forward {violation}" if violation else ""
        candidate.reject("runtime", f"seed {draw + 1}: output cached across calls: it returns the result "
                                    f"for the previous inputs{also}")
    elif violation is not None:
        candidate.reject("runtime", f"forward {violation}")
    elif not verdict.ok:
        outcome.fail(f"seed {draw + 1}: {verdict.reason}")
    elif mutated and not reference.mutates_inputs:
        outcome.fail(f"seed {draw + 1}: writes to its input {mutated[0]} (the reference leaves its "
                     "inputs unchanged)")


def _raise_if_device_lost(backend: Any, error: Exception, candidate: Candidate) -> None:
    """Device errors poison the context for everyone after: stop the evaluation with the reason."""
    if not _device_usable(backend):
        candidate.reject("crash", f"device error: {one_line(error)}")
        raise DeviceLost(f"{candidate.name}: {one_line(error)}") from error


def _device_usable(backend: Any) -> bool:
    if backend.device_type == "cpu":
        return True
    try:
        backend.synchronize()
        torch.ones(1, device=backend.device()).add_(1).sum().item()
        return True
    except Exception:
        return False


def _release_memory(backend: Any) -> None:
    module = getattr(torch, backend.device_type, None)
    if module is not None and hasattr(module, "empty_cache"):
        module.empty_cache()


def _estimated_bytes(inputs: list, model: torch.nn.Module, outputs: Any) -> int:
    parameters = [*model.parameters(), *model.buffers()]
    return tensor_bytes(inputs) + tensor_bytes(parameters) + tensor_bytes(flatten_outputs(outputs))


def _compute_dtype(inputs: list, model: torch.nn.Module) -> torch.dtype:
    for value in [*inputs, *model.parameters()]:
        if isinstance(value, torch.Tensor) and value.is_floating_point():
            return value.dtype
    return torch.float32


def _time_case(problem: Problem, index: int, case: dict, candidates: list[Candidate],
               models: dict[str, torch.nn.Module], reference: Reference, backend: Any,
               tracer: LaunchTracer, options: Options, base_seed: int, ceilings: dict,
               report: dict[str, Any], emit: Emit) -> None:
    device = backend.device()
    contestants = [timing.Contestant("reference", reference.native, guarded=False, verify=False)]
    if options.torch_compile:
        try:
            compiled = torch.compile(reference.model)
            contestants.append(timing.Contestant(
                "torch.compile", lambda inputs: _no_grad(compiled, inputs), guarded=False, verify=False))
        except Exception as error:
            report["torch_compile_error"] = one_line(error)
    timed = [c for c in candidates if c.active and c.cases[index].correct and c.name in models]
    for candidate in timed:
        model = models[candidate.name]
        contestants.append(timing.Contestant(candidate.name, lambda inputs, m=model: _no_grad(m, inputs),
                                             guarded=True, verify=True))
    last: dict[str, Any] = {}  # the repetition's inputs (held, so their identity stays theirs) and outputs

    def verify(inputs: list, output: Any) -> Verdict:
        if last.get("inputs") is not inputs:
            last["inputs"], last["outputs"] = inputs, reference.outputs(inputs)
        expected, native, exact = last["outputs"]
        return compare(output, expected, native, allow_tf32=reference.allow_tf32, expected_is_float64=exact)

    emit({"event": "progress", "stage": "time", "case": index,
          "message": f"case {index + 1}/{len(problem.cases)} ({case_label(case)}): timing"})
    by_name = {candidate.name: candidate for candidate in timed}
    while True:
        try:
            with tf32(reference.allow_tf32):
                measurements = timing.measure(
                    contestants, lambda seed: make_inputs(problem, case, seed, device), backend, tracer,
                    verify, timing.Settings(reps=options.reps, min_reps=options.min_reps,
                                    max_reps=options.max_reps, budget_s=options.budget_s), case_seed(base_seed, index, 1000),
                    private_inputs=reference.mutates_inputs,
                    progress=lambda message: emit({"event": "progress", "stage": "time", "case": index,
                                                   "message": message}))
            break
        except timing.ContestantError as failure:
            if failure.name == "torch.compile" and _device_usable(backend):
                report["torch_compile_error"] = one_line(failure.error)
                contestants = [c for c in contestants if c.name != failure.name]
                continue
            candidate = by_name.get(failure.name)
            if candidate is None and not _device_usable(backend):
                for suspect in timed:
                    suspect.reject("crash", f"device error while timing case {index}, interleaved with "
                                            f"the reference: {one_line(failure.error)}")
                raise DeviceLost(f"while timing case {index}: {one_line(failure.error)}") from failure.error
            if candidate is None:
                raise ProblemError(f"{problem.path.name}: case {index}: timing {failure.name} failed: "
                                   f"{one_line(failure.error)}") from failure.error
            _raise_if_device_lost(backend, failure.error, candidate)
            candidate.reject("runtime", f"a timed call raised {one_line(failure.error)}")
            contestants = [c for c in contestants if c.name != failure.name]
            timed.remove(candidate)

    peak = roofline.peak_flops(ceilings, report.get("compute_dtype", "float32"), reference.allow_tf32)

    def place(summary: dict[str, float]) -> dict[str, float | None]:
        return roofline.position(summary["median"] / 1e3, report.get("bytes"), report.get("flops"),
                                 ceilings["bandwidth"], peak)

    reference_time = measurements["reference"].summary()
    report["reference_ms"] = reference_time
    if reference_time:
        report["reference_roofline"] = place(reference_time)
    compiled_time = measurements.get("torch.compile")
    report["torch_compile_ms"] = compiled_time.summary() if compiled_time else None
    for candidate in timed:
        measurement = measurements[candidate.name]
        outcome = candidate.cases[index]
        if measurement.violation is not None:
            candidate.reject("runtime", measurement.violation)
            continue
        summary = measurement.summary()
        outcome.time_ms = summary
        outcome.verified_timed_calls = measurement.verified
        position = place(summary)
        outcome.gbps, outcome.tflops = position["gbps"], position["tflops"]
        outcome.roofline_pct = position["roofline_pct"]
        if reference_time:
            outcome.speedup = reference_time["median"] / summary["median"]
        if report["torch_compile_ms"]:
            outcome.speedup_vs_compile = report["torch_compile_ms"]["median"] / summary["median"]
        if position["floor_ms"] and summary["median"] < 0.95 * position["floor_ms"]:
            outcome.flags.append("faster than the roofline floor: check bytes/flops, or work was skipped")


def _no_grad(model: torch.nn.Module, inputs: list) -> Any:
    with torch.no_grad():
        return model(*inputs)
