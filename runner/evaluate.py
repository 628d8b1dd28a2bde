"""The judge: a problem, one or more solutions and a backend in, a JSON-able verdict out.

This runs in the judge's process (``runner.worker``), which never imports or runs candidate code.
Each solution runs in a contestant process of its own (``runner.contestant``); the judge draws the
seeds, computes the reference, compares what the contestants return, times them interleaved with
the reference (which runs in a contestant process of its own too, with no candidate code) and
writes the verdict. A candidate can crash, hang, tamper with its own process or lie in its
replies: it only ever loses its own verdict.

The pipeline is an ordered table of named stages over one ``Evaluation`` (``STAGES``), and each
case an ordered table of its own (``CASE_STAGES``):

``static``       parse each solution, and the modules beside it that it imports, and run the
                 static rules (``runner.static_check``); an error rejects the solution before any
                 of its code runs.
``load``         import the problem here (the reference is trusted code).
``contestants``  start one contestant per solution (all at once); it imports the solution under
                 the guards.
per case:
``prepare``      the case's init inputs from a drawn seed, the reference ``Model`` here and every
                 ``ModelNew`` in its contestant from the same seed; when the parameter names and
                 shapes agree, each candidate gets the reference's parameters, so initialisation
                 order cannot make a correct kernel fail.
``check``        for each fresh seed: every contestant runs one forward on inputs made from it
                 (guarded, fresh allocations poisoned) and writes its outputs to a file named
                 here; the judge makes the same inputs, runs the reference in float64 (or its own
                 precision, see ``Reference``) and in its own precision, and ``runner.compare``
                 and the guards' reports decide. Each outputs file is removed as soon as it is
                 read, so no other contestant finds it.
``time``         the eager reference, the optional ``torch.compile`` of it, and every candidate
                 correct on the case, interleaved on the same fresh inputs (``runner.timing``),
                 with the host-side bound and the roofline floor checked.

A guard violation (torch compute in forward, no Triton launch, outputs not written by a kernel,
side streams or threads, tampering, a timed call returning a stale or wrong result) rejects the
whole solution. A wrong value, a crash or an exception in forward fails the case. A contestant
that dies, hangs or passes a limit is rejected with the reason, and the others go on.
"""
from __future__ import annotations

import hashlib
import random
import shutil
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

import torch

from runner import contestants, roofline, sandbox, seeds, timing
from runner.channel import ContestantLost
from runner.compare import Verdict, compare, flatten_outputs
from runner.errors import one_line
from runner.exchange import input_digest, load_outputs, same_inputs
from runner.inputs import make_init_inputs, make_inputs, seed_everything, tensor_bytes
from runner.options import Options
from runner.problem import Problem, ProblemError, case_label, load_problem
from runner.reference import Reference
from runner.static_check import ERROR, check_solution

Emit = Callable[[dict], None]
RUNNER = Path(__file__).resolve().parent


class DeviceLost(Exception):
    """The judge's device is unusable (an error in the in-process mode, or the device itself)."""


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
    host_bound: dict[str, float] | None = None
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
    """A solution under evaluation, and the contestant that runs it."""

    name: str
    path: Path
    static: list[dict] = field(default_factory=list)
    rejected: dict[str, str] | None = None
    cases: dict[int, CaseOutcome] = field(default_factory=dict)
    handle: contestants.Handle | None = None

    @property
    def active(self) -> bool:
        return self.rejected is None and self.handle is not None

    def reject(self, stage: str, reason: str) -> None:
        if self.rejected is None:
            self.rejected = {"stage": stage, "reason": reason}

    def report(self, case_indexes: list[int], problem: Problem | None) -> dict[str, Any]:
        cases = []
        for index in case_indexes:
            params = problem.cases[index] if problem else {}
            outcome = self.cases.get(index) or CaseOutcome(index, params, case_label(params))
            if self.rejected is not None:
                outcome.fail(f"rejected ({self.rejected['stage']}): {self.rejected['reason']}")
            elif outcome.correct is None:
                outcome.fail("not run")
            cases.append(outcome.to_dict())
        return {"name": self.name, "path": str(self.path), "ok": self.rejected is None and all(c["correct"] for c in cases),
                "rejected": self.rejected, "static": self.static, "cases": cases}


@dataclass
class Evaluation:
    """Everything one evaluation knows; each stage reads it and adds to it."""

    problem_path: str
    candidates: list[Candidate]
    backend: Any
    options: Options
    emit: Emit
    base_seed: int
    exchange: Path
    token: str
    sandboxed: bool
    tracer: Any = None  # the in-process contestants' launch tracer
    problem: Problem | None = None
    indexes: list[int] = field(default_factory=list)
    device_name: str | None = None
    timed: bool = False
    ceilings: dict | None = None
    case_reports: list[dict] = field(default_factory=list)
    device_error: str | None = None
    reference_timer: contestants.Handle | None = None
    flush_buffer: Any = None
    runner_digest: str = ""

    def request(self, candidate: Candidate, command: dict[str, Any]) -> dict[str, Any] | None:
        """A request to a candidate's contestant; None (and the candidate rejected) if it is lost,
        crashed the device or was caught tampering."""
        return self.request_all([candidate], lambda _: command)[candidate.name]

    def request_all(self, candidates: list[Candidate], command_of: Callable[[Candidate], dict[str, Any]],
                    optional: bool = False) -> dict[str, dict[str, Any] | None]:
        """The same kind of request to several contestants, all sent before any answer is awaited (they
        work at once); each answer as ``request`` gives it. An ``optional`` request (an accelerator
        only) rejects no one for its own failure: its answers come back as they are."""
        sent = {}
        for candidate in candidates:
            command = command_of(candidate)
            try:
                sent[candidate.name] = (command, candidate.handle.channel.send(command))
            except ContestantLost as lost:
                sent[candidate.name] = (command, lost)
        return {candidate.name: self._answer(candidate, *sent[candidate.name], optional) for candidate in candidates}

    def _answer(self, candidate: Candidate, command: dict[str, Any], sent: Any,
                optional: bool = False) -> dict[str, Any] | None:
        try:
            if isinstance(sent, ContestantLost):
                raise sent
            reply = candidate.handle.channel.receive(sent, self.options.call_timeout_s)
        except ContestantLost as lost:
            stage = "timeout" if "within" in str(lost) else "crash"
            candidate.reject(stage, f"{lost} (in stage '{command['op']}')")
            candidate.handle.stop(self.token)
            return None
        if optional:
            return reply
        if "error" in reply and not reply.get("device_usable", True):
            candidate.reject("crash", f"device error: {reply['error']}")
            self.check_device(candidate.name, reply["error"])
            return None
        if reply.get("rejected"):
            candidate.reject(reply["rejected"]["stage"], reply["rejected"]["reason"])
            return None
        return reply

    def check_device(self, who: str, error: str) -> None:
        """After a contestant's device error: in process (or for the device itself) that is the end."""
        if not self.sandboxed or not device_usable(self.backend):
            raise DeviceLost(f"{who}: {error}")

    def new_file(self, label: str) -> str:
        return str(self.exchange / f"{label}-{random.SystemRandom().getrandbits(64):016x}.pt")


# ------------------------------------------------------------------------------------ the pipeline


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
        for stage in STAGES.values():
            stage(evaluation)
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
    indexes = evaluation.options.cases if evaluation.options.cases is not None else list(range(len(problem.cases)))
    for index in indexes:
        if not 0 <= index < len(problem.cases):
            raise ProblemError(f"{problem.path.name}: no case {index} (it has {len(problem.cases)})")
    evaluation.indexes = indexes
    evaluation.device_name = evaluation.backend.device_name()
    evaluation.timed = evaluation.options.time and evaluation.backend.can_time
    evaluation.ceilings = roofline.load_ceilings(evaluation.device_name) if evaluation.timed else None


def start_contestants(evaluation: Evaluation) -> None:
    if not evaluation.sandboxed:
        from runner.guards import LaunchTracer

        evaluation.tracer = LaunchTracer(evaluation.backend.launch_hook_fires, evaluation.backend.current_stream)
        evaluation.tracer.install()
    starting = [candidate for candidate in evaluation.candidates if candidate.rejected is None]
    for candidate in starting:
        candidate.handle = new_contestant(evaluation, candidate.name)
    # Starting a contestant (torch, Triton, the solution) is most of a short evaluation: all import at once.
    evaluation.emit({"event": "progress", "stage": "load", "message": f"importing {len(starting)} solution(s)"})
    replies = evaluation.request_all(starting, lambda candidate: {
        "op": "load", "problem": str(evaluation.problem.path), "solution": str(candidate.path),
        "quick": evaluation.options.quick, "exchange": str(evaluation.exchange)})
    for candidate in starting:
        if "error" in (replies.get(candidate.name) or {}):
            candidate.reject("load", replies[candidate.name]["error"])
    target = compile_target(evaluation.backend) if evaluation.options.precompile else None
    if target is not None:
        evaluation.emit({"event": "progress", "stage": "precompile", "message": f"compiling for {target} in parallel"})
        evaluation.request_all([c for c in starting if c.active],
                               lambda c: {"op": "precompile", "solution": str(c.path), "target": target,
                                          "problem": str(evaluation.problem.path)}, optional=True)


def new_contestant(evaluation: Evaluation, name: str, trusted: bool = False) -> contestants.Handle:
    """A contestant for one solution; ``trusted`` (the reference) gets no process limit, since
    torch.compile of the reference starts a pool of compile workers."""
    if not evaluation.sandboxed:
        return contestants.local(name, evaluation.backend, evaluation.tracer)
    limits = sandbox.Limits(memory_bytes=int(evaluation.options.memory_limit_gib * (1 << 30))
                            if evaluation.options.memory_limit_gib else sandbox.default_memory_limit(),
                            processes=None if trusted else evaluation.options.process_limit)
    return contestants.start(name, evaluation.backend, evaluation.exchange, limits, evaluation.token)


def cases(evaluation: Evaluation) -> None:
    try:
        for index in evaluation.indexes:
            case = CaseRun(evaluation, index)
            for stage in CASE_STAGES.values():
                stage(case)
            evaluation.case_reports.append(case.report)
    except DeviceLost as error:
        evaluation.device_error = str(error)


STAGES: dict[str, Callable[[Evaluation], None]] = {
    "static": static,
    "load": load,
    "contestants": start_contestants,
    "cases": cases,
}


# ------------------------------------------------------------------------------------ one case


@dataclass
class CaseRun:
    """One case of an evaluation as its stages build it up."""

    evaluation: Evaluation
    index: int
    reference: Reference | None = None
    reference_model: Any = None
    first_inputs: list | None = None
    last_native: Any = None
    report: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        params = self.evaluation.problem.cases[self.index]
        self.report = {"case": self.index, "params": params, "label": case_label(params)}
        for candidate in self.evaluation.candidates:
            candidate.cases[self.index] = CaseOutcome(self.index, params, case_label(params))

    @property
    def params(self) -> dict[str, Any]:
        return self.report["params"]

    def inputs(self, seed: int) -> list:
        problem = self.evaluation.problem
        try:
            return make_inputs(problem, self.params, seed, self.evaluation.backend.device())
        except Exception as error:
            raise ProblemError(f"{problem.path.name}: case {self.index}: get_inputs() failed: {one_line(error)}") from error

    def progress(self, stage: str, message: str) -> None:
        total = len(self.evaluation.problem.cases)
        self.evaluation.emit({"event": "progress", "stage": stage, "case": self.index,
                              "message": f"case {self.index + 1}/{total} ({self.report['label']}): {message}"})


def prepare(case: CaseRun) -> None:
    evaluation, problem = case.evaluation, case.evaluation.problem
    case.progress("prepare", "building models")
    device = evaluation.backend.device()
    init_seed = seeds.derive(evaluation.base_seed, "init", case.index)
    try:
        init_inputs = make_init_inputs(problem, case.params, init_seed, device)
        seed_everything(init_seed)
        # Parameters are created on the device: initialising large layers on the host costs seconds.
        with problem.applied(case.params), device:
            case.reference_model = problem.Model(*init_inputs).to(device)
    except Exception as error:
        raise ProblemError(f"{problem.path.name}: case {case.index}: building Model failed: {one_line(error)}") from error
    case.reference = Reference(case.reference_model, problem.allow_tf32)
    parameters = None
    if isinstance(case.reference_model, torch.nn.Module) and case.reference_model.state_dict():
        parameters = evaluation.new_file(f"parameters-{case.index}")
        torch.save(case.reference_model.state_dict(), parameters)
    case.report["init_seed"] = init_seed
    building = [c for c in evaluation.candidates if c.active]
    replies = evaluation.request_all(building, lambda c: {"op": "build", "case": case.index, "init_seed": init_seed,
                                                          "parameters": parameters})
    for candidate in building:
        reply, outcome = replies.get(candidate.name), candidate.cases[case.index]
        if reply is not None and "failed" in reply:
            outcome.fail(reply["failed"])
        elif reply is not None and "error" in reply:
            outcome.fail(f"building ModelNew failed: {reply['error']}")


def check(case: CaseRun) -> None:
    evaluation = case.evaluation
    for draw in range(evaluation.options.seeds):
        seed = seeds.derive(evaluation.base_seed, "check", case.index, draw)
        checking = [c for c in evaluation.candidates if c.active and c.cases[case.index].correct is not False]
        if not checking:
            break
        case.progress("check", f"correctness, seed {draw + 1}/{evaluation.options.seeds}")
        paths = {c.name: evaluation.new_file(f"{c.name}-check") for c in checking}
        command = lambda c: {"op": "check", "seed": seed, "output": paths[c.name]}  # noqa: E731
        for candidate in checking:
            candidate.cases[case.index].seeds.append(seed)
        # The first call of a case compiles and autotunes: one contestant at a time, so that no
        # autotuner times its configurations against another's work; later seeds run at once.
        if draw == 0:
            answered = {}
            for candidate in checking:
                answered.update(evaluation.request_all([candidate], command))
        else:
            answered = evaluation.request_all(checking, command)
        replies = {}
        for candidate in checking:
            outcome, reply, path = candidate.cases[case.index], answered.get(candidate.name), paths[candidate.name]
            if reply is None:
                continue
            if "launches" in reply:
                outcome.launches, outcome.kernels = reply["launches"], reply["kernels"]
            if "error" in reply:
                outcome.fail(f"forward raised {reply['error']}")
                continue
            output = read_outputs(candidate, path, evaluation.backend.device())
            if output is not None:
                replies[candidate.name] = (candidate, reply, output)
        inputs = case.inputs(seed)
        if case.first_inputs is None:
            case.first_inputs = inputs
        evaluation.emit({"event": "progress", "stage": "reference", "case": case.index, "message": ""})
        try:
            case.reference.prepare(inputs)
            expected, native, exact = case.reference.outputs(inputs)
        except Exception as error:
            raise ProblemError(f"{evaluation.problem.path.name}: case {case.index}: the reference failed: "
                               f"{one_line(error)}") from error
        digest = input_digest(inputs)
        for candidate, reply, output in replies.values():
            if not same_inputs(digest, reply.get("digest")):
                candidate.reject("runtime", "the inputs it ran on are not the ones made from the judge's seed "
                                            "(get_inputs() replaced, or not reproducible from its seed)")
                continue
            judge(candidate, candidate.cases[case.index], draw, output, reply["mutated"], reply["violation"],
                  (expected, native, exact), case.last_native, case.reference)
        case.last_native = native
    for candidate in evaluation.candidates:
        outcome = candidate.cases[case.index]
        if candidate.active and outcome.correct is None and outcome.seeds:
            outcome.correct = True
    case.report.update({"reference_precision": case.reference.precision, "allow_tf32": case.reference.allow_tf32})
    if case.first_inputs is not None:
        problem = evaluation.problem
        with problem.applied(case.params):
            declared_bytes, flops = problem.bytes(case.params), problem.flops(case.params)
        case.report["bytes"] = declared_bytes if declared_bytes is not None else estimated_bytes(
            case.first_inputs, case.reference_model, case.last_native)
        case.report["bytes_source"] = ("problem" if declared_bytes is not None
                                       else "estimate: inputs and parameters read once, outputs written once")
        case.report["flops"] = flops
        case.report["compute_dtype"] = str(compute_dtype(case.first_inputs, case.reference_model)).replace("torch.", "")


def judge(candidate: Candidate, outcome: CaseOutcome, draw: int, output: Any, mutated: list[int],
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
        outcome.fail(f"seed {draw + 1}: writes to its input {mutated[0]} (the reference leaves its inputs unchanged)")


def time_case(case: CaseRun) -> None:
    evaluation = case.evaluation
    ready = [c for c in evaluation.candidates if c.active and c.cases[case.index].correct]
    if not evaluation.timed or case.first_inputs is None:
        return
    case.progress("time", "timing")
    reference_timer = reference_contestant(evaluation, case)
    timed = [timing.Timed("reference", reference_timer.channel, guarded=False, trusted=True)]
    if evaluation.options.torch_compile:
        timed.append(timing.Timed("torch.compile", reference_timer.channel, which="torch.compile", guarded=False))
    by_name = {}
    for candidate in ready:
        timed.append(timing.Timed(candidate.name, candidate.handle.channel))
        by_name[candidate.name] = candidate
    expected_by_seed: dict[int, tuple] = {}

    def verify(name: str, seed: int, path: str) -> Verdict:
        if seed not in expected_by_seed:
            expected_by_seed.clear()
            expected_by_seed[seed] = case.reference.outputs(case.inputs(seed))
        expected, native, exact = expected_by_seed[seed]
        output = read_outputs(by_name[name], path, evaluation.backend.device())
        if output is None:
            return Verdict(False, "its outputs could not be read")
        return compare(output, expected, native, allow_tf32=case.reference.allow_tf32, expected_is_float64=exact)

    options = evaluation.options
    settings = timing.Settings(reps=options.reps, min_reps=options.min_reps, max_reps=options.max_reps,
                               budget_s=options.budget_s, timeout_s=options.call_timeout_s)
    rng = random.Random(seeds.derive(evaluation.base_seed, "order", case.index))
    while True:
        try:
            with timing.collection_paused():
                measurements = timing.measure(
                    timed, seed_of=lambda rep: seeds.derive(evaluation.base_seed, "time", case.index, rep),
                    settings=settings, rng=rng, flush=lambda: flush(evaluation), verify=verify,
                    exchange=evaluation.exchange, private_inputs=case.reference.mutates_inputs,
                    progress=lambda message: case.progress("time", message))
            break
        except timing.ContestantError as failure:
            if failure.name == "torch.compile":
                case.report["torch_compile_error"] = failure.message
            elif failure.name == "reference":
                if not failure.device_usable:
                    raise DeviceLost(f"while timing the reference of case {case.index}: {failure.message}") from None
                raise ProblemError(f"{evaluation.problem.path.name}: case {case.index}: timing the reference failed: "
                                   f"{failure.message}") from None
            else:
                candidate = by_name[failure.name]
                if not failure.device_usable:
                    candidate.reject("crash", f"device error in a timed call: {failure.message}")
                    evaluation.check_device(candidate.name, failure.message)
                else:
                    candidate.reject("runtime", f"a timed call failed: {failure.message}")
            timed = [t for t in timed if t.name != failure.name]
    bounds = timing.host_bound(measurements, timed)
    place(case, measurements, bounds, by_name)


def place(case: CaseRun, measurements: dict[str, timing.Measurement], bounds: dict[str, dict],
          by_name: dict[str, Candidate]) -> None:
    """Times, speedups and roofline positions into the case report and the candidates' outcomes."""
    report, ceilings = case.report, case.evaluation.ceilings
    peak = roofline.peak_flops(ceilings, report.get("compute_dtype", "float32"), case.reference.allow_tf32)

    def position(summary: dict[str, float]) -> dict[str, float | None]:
        return roofline.position(summary["median"] / 1e3, report.get("bytes"), report.get("flops"),
                                 ceilings["bandwidth"], peak)

    reference_time = measurements["reference"].summary()
    report["reference_ms"] = reference_time
    if reference_time:
        report["reference_roofline"] = position(reference_time)
    compiled = measurements.get("torch.compile")
    report["torch_compile_ms"] = compiled.summary() if compiled else None
    report["host_bound"] = {name: bounds[name] for name in ("reference", "torch.compile") if name in bounds}
    for name, candidate in by_name.items():
        if name not in measurements or candidate.rejected is not None:
            continue
        measurement, outcome = measurements[name], candidate.cases[case.index]
        outcome.host_bound = bounds.get(name)
        if measurement.violation is not None:
            candidate.reject("runtime", measurement.violation)
            continue
        summary = measurement.summary()
        outcome.time_ms = summary
        outcome.verified_timed_calls = measurement.verified
        placed = position(summary)
        outcome.gbps, outcome.tflops, outcome.roofline_pct = placed["gbps"], placed["tflops"], placed["roofline_pct"]
        if reference_time:
            outcome.speedup = reference_time["median"] / summary["median"]
        if report["torch_compile_ms"]:
            outcome.speedup_vs_compile = report["torch_compile_ms"]["median"] / summary["median"]
        if placed["floor_ms"] and summary["median"] < 0.95 * placed["floor_ms"]:
            outcome.flags.append("faster than the roofline floor: check bytes/flops, or work was skipped")


CASE_STAGES: dict[str, Callable[[CaseRun], None]] = {
    "prepare": prepare,
    "check": check,
    "time": time_case,
}


# ------------------------------------------------------------------------------------ helpers


def reference_contestant(evaluation: Evaluation, case: CaseRun) -> contestants.Handle:
    """The process that times the reference (no candidate code in it), built for this case."""
    requests = [{"op": "build", "case": case.index, "init_seed": case.report["init_seed"],
                 "allow_tf32": case.reference.allow_tf32, "torch_compile": evaluation.options.torch_compile}]
    if evaluation.reference_timer is None:
        evaluation.reference_timer = new_contestant(evaluation, "reference", trusted=True)
        requests.insert(0, {"op": "load", "kind": "reference", "problem": str(evaluation.problem.path),
                            "quick": evaluation.options.quick})
    for command in requests:
        try:
            reply = evaluation.reference_timer.channel.request(command, evaluation.options.call_timeout_s)
        except ContestantLost as lost:
            raise ProblemError(f"case {case.index}: the reference's timing process was lost: {lost}") from None
        if "error" in reply or "failed" in reply:
            raise ProblemError(f"case {case.index}: the reference's timing process could not {command['op']} the "
                               f"problem: {reply.get('error') or reply.get('failed')}")
    return evaluation.reference_timer


def read_outputs(candidate: Candidate, path: str, device: Any) -> list | None:
    """The outputs a contestant wrote, removed once read, so that no other contestant finds them; a
    file that is missing or not outputs rejects the candidate."""
    try:
        return load_outputs(path, device)
    except Exception as error:
        candidate.reject("runtime", f"its outputs file could not be read ({one_line(error)})")
        return None
    finally:
        Path(path).unlink(missing_ok=True)


def compile_target(backend: Any) -> str | None:
    """``sm90`` for the CUDA device here (what its contestants compile for ahead of time), else None."""
    if backend.name != "cuda":
        return None
    major, minor = torch.cuda.get_device_capability()
    return f"sm{major}{minor}"


def flush(evaluation: Evaluation) -> None:
    """Evict L2 from the judge's own process: a buffer larger than L2, written."""
    backend = evaluation.backend
    if evaluation.flush_buffer is None:
        evaluation.flush_buffer = torch.empty(max(backend.l2_flush_bytes // 4, 1), dtype=torch.int32,
                                              device=backend.device())
    evaluation.flush_buffer.zero_()
    backend.synchronize()


def device_usable(backend: Any) -> bool:
    if backend.device_type == "cpu":
        return True
    try:
        backend.synchronize()
        torch.ones(1, device=backend.device()).add_(1).sum().item()
        return True
    except Exception:
        return False


def runner_digest(problem_path: str) -> str:
    """A hash of the runner's own source and the problem file: they must not change during a run."""
    digest = hashlib.sha256()
    for path in sorted(RUNNER.rglob("*.py")) + [Path(problem_path)]:
        try:
            digest.update(path.read_bytes())
        except OSError:
            digest.update(b"missing")
    return digest.hexdigest()


def estimated_bytes(inputs: list, model: torch.nn.Module, outputs: Any) -> int:
    parameters = [*model.parameters(), *model.buffers()]
    return tensor_bytes(inputs) + tensor_bytes(parameters) + tensor_bytes(flatten_outputs(outputs))


def compute_dtype(inputs: list, model: torch.nn.Module) -> torch.dtype:
    for value in [*inputs, *model.parameters()]:
        if isinstance(value, torch.Tensor) and value.is_floating_point():
            return value.dtype
    return torch.float32


def _scratch_root() -> str | None:
    """Where the judge's exchange files go: shared memory when there is room, else the temp folder."""
    shm = Path("/dev/shm")
    try:
        if shm.is_dir() and shutil.disk_usage(shm).free > 8 << 30:
            return str(shm)
    except OSError:
        pass
    return None
