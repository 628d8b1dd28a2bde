"""What one judgement is made of: its context (``Evaluation``), each solution's record (``Candidate``)
and each case's outcome (``CaseOutcome``), and how the judge asks its contestants.

Every stage of ``ladder.runner.evaluate`` and ``ladder.runner.case`` reads and extends one ``Evaluation``;
requests go to contestants only through ``Evaluation.request``/``request_all``, which turn a lost,
crashed or tampering contestant into its candidate's rejection.
"""
from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

import torch

from ladder.runner import contestants, sandbox
from ladder.runner.channel import ContestantLost
from ladder.runner.compare import Verdict
from ladder.runner.options import Options
from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)
from ladder.runner.problem import Problem, case_label

Emit = Callable[[dict], None]


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
    launches: int | None = None  # per forward, in steady state (``launch_counts`` says how it was counted)
    launch_counts: dict[str, Any] = field(default_factory=dict)
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
    notes: list[str] = field(default_factory=list)  # what the honesty guards saw, under ``guards: report``

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
    stage_seconds: dict[str, float] = field(default_factory=dict)  # per stage, the per-case ones summed

    def add_seconds(self, stage: str, seconds: float) -> None:
        """Wall seconds spent in a stage, so that a slow judgement says where its time went."""
        self.stage_seconds[stage] = round(self.stage_seconds.get(stage, 0.0) + seconds, 2)

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


def new_contestant(evaluation: "Evaluation", name: str, trusted: bool = False,
                   solution: Path | None = None) -> contestants.Handle:
    """A contestant for one solution; ``trusted`` (the reference) gets no process limit, since
    torch.compile of the reference starts a pool of compile workers. A candidate's ``solution``
    gets its own kernel cache and temporary folder (``contestants.private_folders``)."""
    if not evaluation.sandboxed:
        return contestants.local(name, evaluation.backend, evaluation.tracer)
    limits = sandbox.Limits(memory_bytes=int(evaluation.options.memory_limit_gib * (1 << 30))
                            if evaluation.options.memory_limit_gib else sandbox.default_memory_limit(),
                            processes=None if trusted else evaluation.options.process_limit)
    return contestants.start(name, evaluation.backend, evaluation.exchange, limits, evaluation.token,
                             solution=None if trusted else solution)


def device_usable(backend: Any) -> bool:
    if backend.device_type == "cpu":
        return True
    try:
        backend.synchronize()
        torch.ones(1, device=backend.device()).add_(1).sum().item()
        return True
    except Exception:
        return False
