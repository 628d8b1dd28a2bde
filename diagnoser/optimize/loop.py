"""``ladder optimize``: the evidence-grounded loop, one round at a time, resumable at every point.

The baseline (round 0) times the initial solution against eager PyTorch and ``torch.compile``.
Then each round runs ``ROUND_STAGES`` in order over one ``Round``:

``diagnose``  the ladder on the best kernel so far (rungs 1-4 as the policy decides; rung 2 reads
              the best's timing from the last gate instead of timing it again); a diagnosis is
              cached by what it diagnosed, so an unchanged best is not diagnosed twice.
``brief``     what the proposer is shown, cut to ``--evidence``, with the history of earlier rounds.
``propose``   the proposer's candidates (``ladder.diagnoser.optimize.proposers``), saved before gating.
``gate``      one judge run: the candidates interleaved with the best, twice, and the initial
              version (``ladder.diagnoser.optimize.gate``); the fastest accepted one becomes the best.
``record``    one journal line for the round, appended once everything above is done.

The loop stops when every case is within ``roofline_stop`` of its roofline floor, after
``patience`` rounds without gain, when the proposer has nothing new, when ``budget_s`` is spent
(the run's own seconds: what its gates and diagnoses spent queued for a cluster's devices is not
counted, so a budget buys the same work alone or among many operators), or after ``rounds``. A
candidate that does not compile, hangs, crashes the device or is wrong is a failed candidate with
its one-line reason and the loop goes on; a lost device or an interrupted run stops with the
journal intact, and ``resume`` continues at the next round with the same best.
A proposer that cannot go on in this call (``Paused``: an agent yet to send its candidate, an
endpoint that answered nothing) stops the run the same resumable way, its failures recorded.
So does a call's ``deadline``: a round whose gate would pass it is not started, and a gate that
runs into it anyway is cut there and not recorded (nobody is blamed; the resume gates it again,
under a deadline ``MAX_CUTS`` times at most, so a gate longer than any call cannot loop forever).
"""
from __future__ import annotations

import difflib
import shutil
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from ladder.diagnoser.ladder import RUNG_TIMEOUTS_S
from ladder.diagnoser.optimize import ascend, escalate
from ladder.diagnoser.optimize.brief import Brief, brief_for
from ladder.diagnoser.optimize.gate import BEST, GateResult, GateSettings, geomean, run_gate
from ladder.diagnoser.optimize.journal import Journal, JournalError, diagnosis_key, own_seconds
from ladder.diagnoser.optimize.proposers import Paused, Proposal, Proposer
from ladder.diagnoser.optimize.proposers.rules import source_hash


DEADLINE = "this call's deadline has passed (--resume continues)"
MAX_CUTS = 2  # a round whose gate the deadline cut this often is not gated again under a deadline


class OptimizeError(Exception):
    """A run that cannot start or go on (one line): bad arguments, a lost device, a broken journal."""


@dataclass
class Settings:
    rounds: int = 15
    candidates: int = 4
    evidence: str = "full"
    patience: int = 3
    budget_s: float | None = None  # for the whole run, across resumes
    deadline: float | None = None  # time.monotonic() at which this call stops (a resume continues)
    roofline_stop: float = 90.0  # % of the roofline floor every case must reach to stop early
    rungs: tuple[int, ...] = (1, 2, 3, 4)
    gate: GateSettings = field(default_factory=GateSettings)
    target: str = "sm90"  # the device the kernel is diagnosed and fixed for (sm90, ascend)
    # Each diagnosis rung's time limit, as `ladder diagnose --rung-timeout` (None: rungs run in this
    # process, unlimited). A rung past its limit is stopped and the round goes on with the others' evidence.
    rung_timeouts: dict[str, float | None] | None = field(default_factory=lambda: dict(RUNG_TIMEOUTS_S))


Gate = Callable[..., GateResult]
Diagnose = Callable[[Path, Path, GateResult | None, "Run"], dict[str, Any]]


@dataclass
class Run:
    """One optimization run: its journal, its problem, the best so far and what happened before."""

    journal: Journal
    problem: Path
    initial: Path
    proposer: Proposer
    settings: Settings
    gate: Gate
    diagnose: Diagnose
    progress: Callable[[str], None]
    best_path: Path | None = None
    best: dict[str, Any] = field(default_factory=dict)
    last_gate: GateResult | None = None
    # The contestant of ``last_gate`` that is the best now: the round's winner once one was accepted,
    # so that the next diagnosis reads the new best's timing, not the one it replaced.
    best_in_gate: str = BEST
    history: list[dict[str, Any]] = field(default_factory=list)
    seconds_before: float = 0.0
    started: float = field(default_factory=time.monotonic)
    # Seconds this process's gates and diagnoses queued for a cluster's devices and CPUs: wall time
    # that is not the run's own, so that a budget means the same work alone or among many operators.
    waited_s: float = 0.0
    stopped: str | None = None
    paused: bool = False  # stopped by the proposer (``Paused``): not final, a resume goes on
    cut: dict[str, Any] | None = None  # a gate the deadline cut: its round and what was running


@dataclass
class Round:
    run: Run
    number: int
    started: float = field(default_factory=time.monotonic)
    diagnosis: dict[str, Any] | None = None
    brief: Brief | None = None
    proposals: list[Proposal] = field(default_factory=list)
    files: dict[str, Path] = field(default_factory=dict)
    result: GateResult | None = None
    waited_s: float = 0.0  # of the round's wall seconds, those its diagnosis and gate queued (``Run.waited_s``)
    pause: str | None = None  # the proposer's ``Paused`` reason: the run stops once the round is recorded
    # Wall seconds of each stage before the record: where a round's (device) time goes, per round.
    stage_seconds: dict[str, float] = field(default_factory=dict)


# ---------------------------------------------------------------------------------- the run


def optimize(solution: str | Path, problem: str | Path, out: str | Path, proposer: Proposer, settings: Settings,
             *, resume: bool = False, continue_from: str | Path | None = None, gate: Gate | None = None,
             diagnose: Diagnose | None = None, progress: Callable[[str], None] = lambda line: None) -> dict[str, Any]:
    """Run (or resume) the loop; the journal's last state, as ``summary`` reads it. The gate and the
    diagnosis default to the target's: an Ascend target has its own (``ladder.diagnoser.optimize.ascend``).
    ``continue_from``: a new run starts where that run stopped, with this proposer (``escalate``)."""
    gate = gate or ascend.gate_for(settings.target, settings.gate.backend) or run_gate
    diagnose = diagnose or ascend.diagnose_for(settings.target) or diagnose_best
    journal = Journal(out)
    run = Run(journal=journal, problem=Path(problem).resolve(), initial=Path(solution).resolve(), proposer=proposer,
              settings=settings, gate=gate, diagnose=diagnose, progress=progress)
    if journal.exists():
        if not resume:
            raise OptimizeError(f"{journal.folder} already holds a run: pass --resume to continue it, or another --out")
        restore(run)
    elif continue_from is not None:
        escalate.seed_from(journal, Path(continue_from), problem=run.problem, initial=run.initial,
                           proposer=proposer.name, settings=_settings_dict(settings))
        restore(run)
    else:
        baseline(run)
    while run.stopped is None:
        run.stopped = stop_reason(run)
        if run.stopped is not None:
            break
        one_round(run, journal.last_round() + 1)
    last = journal.records()[-1]
    if run.cut or not (last.get("kind") == "stop" and last.get("reason") == run.stopped):  # each cut counts
        journal.append({"kind": "stop", "reason": run.stopped, "final": run.stopped != DEADLINE and not run.paused,
                        "after_round": journal.last_round(), "best": run.best, **({"cut": run.cut} if run.cut else {})})
    return summary(journal, run.stopped)


def baseline(run: Run) -> None:
    """Round 0: the initial solution timed against eager and torch.compile, the run's header."""
    run.progress("baseline: timing the initial solution")
    initial_copy = run.journal.folder / "initial.py"
    run.journal.folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(run.initial, initial_copy)
    began = time.monotonic()
    settings = gate_settings_within_deadline(run.settings)
    result = run.gate(run.problem, run.initial, run.initial, {}, settings, torch_compile=True)
    gate_seconds = round(time.monotonic() - began, 2)
    run.waited_s += result.waited_s
    if cut_by_deadline(result, settings, run.settings):
        raise OptimizeError("this call's deadline passed while timing the initial solution; "
                            "the next call starts the run again")
    best = best_record(run.initial, 0, result.best_cases)
    if not all(case["correct"] for case in best["cases"]):
        wrong = next(case for case in best["cases"] if not case["correct"])
        raise OptimizeError(f"the initial solution is not correct (case {wrong['label']}: {wrong.get('reason')}); "
                            "fix it before optimizing")
    run.journal.start({"solution": str(run.initial), "problem": str(run.problem),
                       "problem_hash": source_hash(run.problem.read_text()), "proposer": run.proposer.name,
                       "settings": _settings_dict(run.settings), "device": result.device,
                       "device_uuid": result.device_uuid, "timed": result.timed, "spread": result.spread,
                       "torch_compile_ms": _compile_times(result), "best": best, "gate_seconds": gate_seconds,
                       "gate_waited_s": result.waited_s,
                       "judge_seconds": result.record.get("stage_seconds"),
                       "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")})
    run.best_path, run.best, run.last_gate = run.journal.set_best(run.initial.read_text()), best, result


def restore(run: Run) -> None:
    run.journal.truncate_to_complete()
    header = run.journal.header()
    if Path(header["problem"]) != run.problem:
        raise OptimizeError(f"{run.journal.folder} is a run of {header['problem']}, not of {run.problem}")
    if header.get("problem_hash") not in (None, source_hash(run.problem.read_text())):
        # Its cases, sizes or declared work may differ: the baseline's times and floors no longer hold.
        raise OptimizeError(f"{run.problem} changed since {run.journal.folder} began: its timings do not hold for "
                            "the problem as it is now; start a new run (another --out)")
    run.best = run.journal.best()
    run.best_path = run.journal.folder / "best.py"
    if not run.best_path.is_file() or source_hash(run.best_path.read_text()) != run.best["source_hash"]:
        # a kill between the journal line and the copy: the line is the truth
        run.journal.set_best((run.journal.folder / run.best["file"]).read_text())
    run.history = [history_entry(r) for r in run.journal.rounds()]
    run.seconds_before = spent_before(run.journal)
    run.progress(f"resuming after round {run.journal.last_round()}")


def spent_before(journal: Journal) -> float:
    """The run's own seconds in the calls before this one, counted as a live run counts them against
    ``budget_s``: its baseline (where it is its own: a continued run's is the other run's) and its own
    rounds, less what they queued. Counting the rounds alone let a resume start a round the budget
    had already stopped (a run stopped at 245 s of baseline and round read 190 s on resuming)."""
    header = journal.header()
    baseline = 0.0 if header.get("continued_from") else (header.get("gate_seconds", 0.0)
                                                           - header.get("gate_waited_s", 0.0))
    return baseline + sum(own_seconds(r) for r in escalate.own_rounds(journal))


def one_round(run: Run, number: int) -> None:
    state = Round(run, number)
    for name, stage in ROUND_STAGES.items():
        run.progress(f"round {number}: {name}")
        began = time.monotonic()
        stage(state)
        state.stage_seconds[name] = round(time.monotonic() - began, 2)
        if run.stopped is not None:
            return


def stop_reason(run: Run) -> str | None:
    settings, rounds = run.settings, escalate.own_rounds(run.journal)  # a continued run's limits are its own
    if rounds and rounds[-1].get("exhausted"):
        return f"the {run.proposer.name} proposer has nothing new to try"
    if len(rounds) >= settings.rounds:
        return f"{settings.rounds} rounds done"
    if len(rounds) >= 2 and all(r.get("void") for r in rounds[-2:]):
        return f"the best so far failed in two judge runs in a row: {rounds[-1]['void']}"
    cases = run.best.get("cases", [])
    if cases and all((c.get("roofline_pct") or 0) >= settings.roofline_stop for c in cases):
        return f"every case is within {100 - settings.roofline_stop:g}% of its roofline floor"
    recent = rounds[-settings.patience:]
    if len(recent) == settings.patience and not any(r.get("accepted") for r in recent):
        return f"{settings.patience} rounds without a gain"
    cuts = [r["cut"] for r in run.journal.records() if r.get("kind") == "stop"
            and (r.get("cut") or {}).get("round") == run.journal.last_round() + 1]
    if settings.deadline is not None and len(cuts) >= MAX_CUTS:
        return (f"the gate of round {cuts[-1]['round']} ran into the call's deadline {len(cuts)} times (last while "
                f"{cuts[-1]['while']}): resume it with a longer deadline or none")
    spent = run.seconds_before + time.monotonic() - run.started - run.waited_s
    if settings.budget_s is not None and spent >= settings.budget_s:
        return f"the time budget of {settings.budget_s:g} s is spent"
    if settings.deadline is not None and time.monotonic() >= settings.deadline:
        return DEADLINE
    return None


# ---------------------------------------------------------------------------------- the stages


def diagnose_stage(state: Round) -> None:
    run = state.run
    if run.settings.evidence != "full":
        return
    key = diagnosis_key(run.best_path.read_text(), run.problem.read_text(), run.settings.rungs)
    state.diagnosis = run.journal.diagnosis(key)
    if state.diagnosis is None:
        state.diagnosis = run.diagnose(run.best_path, run.problem, run.last_gate, run)
        state.waited_s += state.diagnosis.pop("waited_s", 0.0)  # a cluster's CPU task says how long it queued
        run.journal.save_diagnosis(key, state.diagnosis)


def brief_stage(state: Round) -> None:
    run = state.run
    state.brief = brief_for(state.number, str(run.problem), str(run.best_path), run.settings.evidence,
                            state.diagnosis, run.best.get("cases", []), run.history)


def propose_stage(state: Round) -> None:
    run = state.run
    try:
        state.proposals = run.proposer.propose(state.brief, run.settings.candidates)
    except Paused as pause:
        state.proposals, state.pause = pause.proposals, pause.reason
        if not state.proposals:  # nothing to record: a resume proposes this round again
            run.stopped, run.paused = pause.reason, True
            return
    for index, proposal in enumerate(state.proposals, 1):
        if proposal.source is not None:
            state.files[f"r{state.number}-c{index}"] = run.journal.save_candidate(state.number, index, proposal.source)


def gate_stage(state: Round) -> None:
    run = state.run
    if not state.files:
        return
    if run.settings.deadline is not None and time.monotonic() + expected_gate_seconds(run, len(state.files)) \
            > run.settings.deadline:
        run.stopped = DEADLINE  # the round is not recorded: a resume diagnoses (cached) and proposes it again
        return
    from ladder.runner.bench import BenchError

    settings = gate_settings_within_deadline(run.settings)
    try:
        result = run.gate(run.problem, run.best_path, run.initial, state.files, settings)
    except BenchError as error:
        raise OptimizeError(f"round {state.number}: the gate could not run: {error}") from None
    if cut_by_deadline(result, settings, run.settings):
        # Cut by the deadline, not by a candidate: nobody is blamed and the round is not recorded, so
        # the next call gates it again (``stop_reason`` ends the retries).
        run.cut = {"round": state.number, "while": running_when_cut(result)}
        run.stopped = DEADLINE
        return
    state.result = result
    state.waited_s += result.waited_s
    if state.result.record.get("device_error"):
        raise OptimizeError(f"round {state.number}: the device was lost ({state.result.record['device_error']}); "
                            "the journal is intact: rerun with --resume")


def gate_settings_within_deadline(settings: Settings) -> GateSettings:
    """The gate's settings with its worker's time limit cut to what is left of this call: the
    estimate above can be wrong (a candidate whose autotuner compiles many configurations), and a
    gate that outlives its call's deadline is killed from outside, losing the call's work."""
    if settings.deadline is None:
        return settings.gate
    left = max(1.0, settings.deadline - time.monotonic())
    return replace(settings.gate, timeout_s=left) if left < settings.gate.timeout_s else settings.gate


def cut_by_deadline(result: GateResult, used: GateSettings, settings: Settings) -> bool:
    """Whether the judge's worker was killed by the deadline's shorter limit, not by its own."""
    return used.timeout_s < settings.gate.timeout_s and result.record.get("worker", {}).get("status") == "timeout"


def running_when_cut(result: GateResult) -> str:
    """What the judge was doing when its worker was killed (the solution the timeout names)."""
    for name, report in result.record.get("solutions", {}).items():
        rejected = report.get("rejected") or {}
        if rejected.get("stage") == "timeout":
            return f"{name}, {rejected.get('reason')}"
    return "between solutions"


def expected_gate_seconds(run: Run, candidates: int) -> float:
    """How long a gate of ``candidates`` should take, from this run's earlier gates: seconds per
    contestant (the best twice, the initial version, each candidate) at the slowest seen so far."""
    header = run.journal.header()
    seen = [(header.get("gate_seconds") or 0.0) / 2]
    for record in run.journal.rounds():
        gated = len([p for p in record.get("proposals", []) if p.get("file")])
        if gated:
            seen.append((record.get("stage_seconds") or {}).get("gate", 0.0) / (gated + 3))
    return max(seen) * (candidates + 3)


def record_stage(state: Round) -> None:
    run = state.run
    best_source = run.best_path.read_text()
    entries = []
    for index, proposal in enumerate(state.proposals, 1):
        name = f"r{state.number}-c{index}"
        verdict = state.result.verdicts.get(name) if state.result else None
        entry = {"id": name, **proposal.to_dict(),
                 "file": f"candidates/{name}.py" if proposal.source is not None else None,
                 "source_hash": source_hash(proposal.source) if proposal.source is not None else None,
                 "diff": _diff(best_source, proposal.source) if proposal.source is not None else None,
                 "outcome": verdict.to_dict() if verdict else {"accepted": False, "reason": proposal.failure}}
        entries.append(entry)
    winner = state.result.winner if state.result else None
    accepted = next((e for e in entries if winner and e["id"] == winner.name), None)
    if accepted is not None:
        new_best = state.files[accepted["id"]]
        run.best_path = run.journal.set_best(new_best.read_text())
        run.best = best_record(new_best, state.number, winner.cases, file=accepted["file"])
    elif state.result is not None:
        run.best = refresh_best(run.best, state.result)
    if state.result is not None and state.result.void is None:  # a void run says nothing of the best
        run.last_gate, run.best_in_gate = state.result, accepted["id"] if accepted else BEST
    shown = accepted or max(entries, key=lambda e: e["outcome"].get("geomean_vs_best") or 0.0, default=None)
    record = {
        "kind": "round", "round": state.number, "proposer": run.proposer.name,
        "rung_reached": (state.diagnosis or {}).get("reached"),
        "evidence": sorted({f.get("pattern") for f in (state.diagnosis or {}).get("findings", []) if f.get("pattern")}),
        "evidence_ids": [f"{f.get('pattern')}@{f.get('line')}" for f in (state.diagnosis or {}).get("findings", [])],
        "proposals": entries, "accepted": accepted["id"] if accepted else None,
        "proposal": {"summary": shown["summary"], "patterns": shown.get("patterns", [])} if shown else None,
        "diff": shown["diff"] if shown else None,
        "outcome": _learnable(shown, accepted is not None) if shown else None,
        "exhausted": not state.proposals,
        "spread": state.result.spread if state.result else None,
        "void": state.result.void if state.result else None,
        "device": state.result.device if state.result else None,
        "device_uuid": state.result.device_uuid if state.result else None,
        "best": run.best, "seconds": round(time.monotonic() - state.started, 2), "waited_s": round(state.waited_s, 2),
        "stage_seconds": dict(state.stage_seconds),
        "judge_seconds": state.result.record.get("stage_seconds") if state.result else None,
    }
    run.journal.append(record)
    run.waited_s += state.waited_s
    run.history.append(history_entry(record))
    if state.pause is not None:
        run.stopped, run.paused = state.pause, True


ROUND_STAGES: dict[str, Callable[[Round], None]] = {
    "diagnose": diagnose_stage,
    "brief": brief_stage,
    "propose": propose_stage,
    "gate": gate_stage,
    "record": record_stage,
}


# ---------------------------------------------------------------------------------- records


def best_record(path: Path, round_number: int, cases: list[dict[str, Any]], file: str = "initial.py") -> dict[str, Any]:
    """The best so far as the journal keeps it: where it is, and its figures in the latest gate run
    (``speedup_vs_initial`` there was timed against the initial version in that same run)."""
    return with_cases({"round": round_number, "file": file, "source_hash": source_hash(path.read_text())}, cases)


def refresh_best(best: dict[str, Any], result: GateResult) -> dict[str, Any]:
    """The best keeps its place; its figures are those of its latest timing."""
    if not all(case.get("time_ms") for case in result.best_cases):
        return best
    return with_cases(best, result.best_cases)


def with_cases(best: dict[str, Any], cases: list[dict[str, Any]]) -> dict[str, Any]:
    rows = [{**case, "speedup_vs_initial": case.get("speedup_vs_initial", 1.0 if best["round"] == 0 else None)}
            for case in cases]
    return {**best, "cases": rows, "geomean_vs_initial": geomean([r.get("speedup_vs_initial") for r in rows]) or 1.0,
            "geomean_vs_eager": geomean([r.get("speedup_vs_eager") for r in rows])}


def history_entry(record: dict[str, Any]) -> dict[str, Any]:
    """What later rounds' briefs say about a round: each candidate, its outcome in one line."""
    return {"round": record["round"],
            "proposals": [{"summary": e["summary"], "source_hash": e.get("source_hash"),
                           "outcome": (e.get("outcome") or {}).get("reason") or "no outcome",
                           "judged": (e.get("outcome") or {}).get("judged", True)}
                          for e in record.get("proposals", [])]}


def summary(journal: Journal, stopped: str | None) -> dict[str, Any]:
    header, best = journal.header(), journal.best()
    return {"run": str(journal.folder), "problem": header["problem"], "solution": header["solution"],
            "proposer": header["proposer"], "rounds": journal.last_round(), "stopped": stopped,
            "best_round": best["round"], "best_file": str(journal.folder / "best.py"),
            "geomean_vs_initial": best["geomean_vs_initial"], "geomean_vs_eager": best.get("geomean_vs_eager"),
            "cases": best["cases"], "device": header.get("device")}


def _learnable(entry: dict[str, Any], accepted: bool) -> dict[str, Any]:
    """The round's outcome under the names ``ladder kb learn`` reads."""
    outcome = entry.get("outcome") or {}
    return {"compiled": outcome.get("compiled"), "correct": outcome.get("correct"),
            "speedup": outcome.get("geomean_vs_best"), "accepted": accepted, "reason": outcome.get("reason")}


def _diff(before: str, after: str) -> str:
    return "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        "a/solution.py", "b/solution.py"))


def _compile_times(result: GateResult) -> dict[str, float | None]:
    return {str(c["case"]): (c.get("torch_compile_ms") or {}).get("median") for c in result.record.get("cases", [])}


def _settings_dict(settings: Settings) -> dict[str, Any]:
    from dataclasses import asdict

    return asdict(settings)


# ---------------------------------------------------------------------------------- diagnosis


def diagnose_best(best: Path, problem: Path, last_gate: GateResult | None, run: Run,
                  capture: str = "device") -> dict[str, Any]:
    """The ladder on the best kernel, rung 2 read from the gate's timing of it (no second device run);
    the first round after a resume has no such gate, and its rung 2 profiles the best on this GPU.

    Rung 3 captures through the JIT on this machine's GPU (``capture="device"``) when the gate timed
    on one, or compiles ahead of time (``"aot"``, or no timed gate): a diagnosis that runs beside
    other evaluations (a Ray CPU task) must not run kernels on a GPU it holds no lease on.
    """
    from ladder.diagnoser import ladder
    from ladder.diagnoser.subject import Subject

    device = last_gate.device if last_gate and last_gate.timed and last_gate.record.get("backend") == "cuda" else None
    if last_gate is None and capture == "device":
        device = _cuda_device_here(run.settings.gate.backend)
    backend = "cuda" if device and capture == "device" else "aot"
    subject = Subject(str(best), str(problem), backend=backend, target="sm90", device=device)
    steps = (ladder.measured_rungs(_profile_from_gate(last_gate, run.best_in_gate, best, problem))
             if device is not None and last_gate is not None else ladder.RUNGS)
    state = ladder.new_state(subject)
    state["options"] = {"ncu": False}
    return ladder.climb(subject, state, set(run.settings.rungs), rungs=steps, limits=run.settings.rung_timeouts)


def _cuda_device_here(requested: str | None) -> str | None:
    """The CUDA device the gate times on here, for the one diagnosis with no gate of this call to read:
    the first round after a resume. Rung 2 then profiles the best itself; compiled ahead of time
    instead, that round's evidence had no profile and no gap on a GPU machine."""
    if requested not in (None, "cuda"):
        return None
    from ladder.runner.backends import detect

    return detect("cuda")[1]


def _profile_from_gate(result: GateResult, name: str, best: Path, problem: Path) -> dict[str, Any]:
    """Rung 2's profile of contestant ``name`` as the gate timed it, with its worst forward of several
    kernels split into them (a few seconds of replays on the device the gate has just let go of)."""
    from ladder.diagnoser.profile import nvidia, split
    from ladder.runner.bench import flat_record

    record = flat_record(result.record, name)
    ceilings = nvidia.ceilings_for(record["device"], result.record.get("ceilings"))
    measured = nvidia.assemble(record, ceilings, {"available": False, "why": "ncu not used in the loop", "cases": {},
                                                  "errors": {}})
    split.attach_split(measured, str(best), str(problem))
    return measured


def load_run(folder: str | Path) -> Journal:
    journal = Journal(folder)
    if not journal.exists():
        raise JournalError(f"{folder}: no optimization journal here")
    return journal
