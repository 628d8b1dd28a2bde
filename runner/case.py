"""One case of a judgement, as an ordered table of named stages (``CASE_STAGES``) over a ``CaseRun``.

``prepare``  the case's init inputs from a drawn seed, the reference ``Model`` here and every
             ``ModelNew`` in its contestant from the same seed; when the parameter names and shapes
             agree, each candidate gets the reference's parameters, so initialisation order cannot
             make a correct kernel fail.
``check``    for each fresh seed: every contestant runs one forward on inputs made from it and
             writes its outputs to a file named here; the judge makes the same inputs, runs the
             reference in float64 (or its own precision, see ``Reference``) and in its own
             precision, and ``ladder.runner.compare`` and the guards' reports decide.
``time``     the eager reference, the optional ``torch.compile`` of it, and every candidate
             correct on the case, interleaved on the same fresh inputs (``ladder.runner.timing``), with
             the host-side bound and the roofline floor checked.
"""
from __future__ import annotations

import contextlib
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import torch

from ladder.runner import contestants, roofline, seeds, timing
from ladder.runner.channel import ContestantLost
from ladder.runner.compare import Verdict, compare, flatten_outputs
from ladder.runner.errors import OUT_OF_MEMORY, one_line, out_of_device_memory
from ladder.runner.evaluation import Candidate, CaseOutcome, DeviceLost, Evaluation, new_contestant
from ladder.runner.exchange import input_digest, load_outputs, same_inputs
from ladder.runner.inputs import make_init_inputs, make_inputs, seed_everything, tensor_bytes
from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)
from ladder.runner.problem import ProblemError, case_label
from ladder.runner.reference import Reference


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
            fail(candidate, outcome, reply["failed"])
        elif reply is not None and "error" in reply:
            fail(candidate, outcome, f"building ModelNew failed: {reply['error']}")


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
        with seconds_of(evaluation, "case check: first calls" if draw == 0 else "case check: calls"):
            if draw == 0:
                answered = {}
                for candidate in checking:
                    answered.update(evaluation.request_all([candidate], command))
            else:
                answered = evaluation.request_all(checking, command)
        replies = {}
        with seconds_of(evaluation, "case check: reading outputs"):
            for candidate in checking:
                outcome, reply, path = candidate.cases[case.index], answered.get(candidate.name), paths[candidate.name]
                if reply is None:
                    continue
                if "launches" in reply:
                    count_launches(outcome, reply)
                outcome.notes = sorted(set(outcome.notes) | set(reply.get("notes") or []))
                if "error" in reply:
                    fail(candidate, outcome, f"forward raised {reply['error']}")
                    continue
                output = read_outputs(candidate, path, evaluation.backend.device())
                if output is not None:
                    replies[candidate.name] = (candidate, reply, output)
        with seconds_of(evaluation, "case check: reference"):
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
        with seconds_of(evaluation, "case check: compare"):
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
    case.last_native = None  # the stale-result check is done: its outputs need not stay through the timing


@contextlib.contextmanager
def seconds_of(evaluation: Evaluation, part: str) -> Iterator[None]:
    """The wall seconds of a part of a case stage into the evaluation's ``stage_seconds``."""
    began = time.monotonic()
    try:
        yield
    finally:
        evaluation.add_seconds(part, time.monotonic() - began)


def fail(candidate: Candidate, outcome: CaseOutcome | None, reason: str) -> None:
    """A failed call: the case's (``outcome``) or, in a timed call, the whole candidate's. One that
    ran out of device memory is neither: the judge and every contestant share the device, so the
    memory may have been anyone's, and the candidate is set aside unjudged (``OUT_OF_MEMORY``)."""
    if out_of_device_memory(reason):
        candidate.reject(OUT_OF_MEMORY, f"{reason} (the judge and the other contestants share the device)")
    elif outcome is not None:
        outcome.fail(reason)
    else:
        candidate.reject("runtime", reason)


def count_launches(outcome: CaseOutcome, reply: dict[str, Any]) -> None:
    """A checked call's launches into the case's counts. The last checked call sets the launches per
    forward until timed calls (warmer still) replace it; the first call's count and the autotuner's
    benchmarking launches (never the forward's) are kept apart, so a report can say what was left out."""
    counts = outcome.launch_counts
    outcome.launches, outcome.kernels = reply["launches"], reply["kernels"]
    counts.setdefault("first_call", reply["launches"])
    counts["autotuning_excluded"] = counts.get("autotuning_excluded", 0) + int(reply.get("tuning_launches") or 0)
    counts.update(per_forward=reply["launches"], source="checked calls", warmup_calls=len(outcome.seeds) - 1)


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
        verdict = compare(output, expected, native, allow_tf32=case.reference.allow_tf32, expected_is_float64=exact)
        # The output and the comparison's float64 temporaries (a 4 GiB output makes 8 GiB ones) would
        # stay cached in the judge between repetitions, out of the reach of the contestants timed next.
        del output
        evaluation.backend.release_cached_memory()
        return verdict

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
                    progress=lambda message: case.progress("time", message),
                    account=lambda part, seconds: evaluation.add_seconds(f"case time: {part}", seconds))
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
                    fail(candidate, None, f"a timed call failed: {failure.message}")
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
        steady = measurement.steady_launches()
        if steady is not None:
            outcome.launches = steady
            outcome.launch_counts["autotuning_excluded"] = (outcome.launch_counts.get("autotuning_excluded", 0)
                                                            + measurement.tuning_launches)
            outcome.launch_counts.update(
                per_forward=steady, source="timed calls", warmup_calls=len(outcome.seeds) + measurement.warmup_calls,
                **({"varying": sorted(set(measurement.launches))} if len(set(measurement.launches)) > 1 else {}))
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


def flush(evaluation: Evaluation) -> None:
    """Evict L2 from the judge's own process: a buffer larger than L2, written."""
    backend = evaluation.backend
    if evaluation.flush_buffer is None:
        evaluation.flush_buffer = torch.empty(max(backend.l2_flush_bytes // 4, 1), dtype=torch.int32,
                                              device=backend.device())
    evaluation.flush_buffer.zero_()
    backend.synchronize()


def estimated_bytes(inputs: list, model: torch.nn.Module, outputs: Any) -> int:
    parameters = [*model.parameters(), *model.buffers()]
    return tensor_bytes(inputs) + tensor_bytes(parameters) + tensor_bytes(flatten_outputs(outputs))


def compute_dtype(inputs: list, model: torch.nn.Module) -> torch.dtype:
    for value in [*inputs, *model.parameters()]:
        if isinstance(value, torch.Tensor) and value.is_floating_point():
            return value.dtype
    return torch.float32
