"""The escalation policy: climb rung 1 -> 2 -> 3 -> 4 only as far as the evidence requires.

The ladder is a plain ordered mapping of named rungs (like Triton's compile stages): each rung is
a function from the subject and the state so far to a dict of new outputs (always `findings`, plus
`profile`, `facts` or `citations`). The state is a JSON-able dict: it is both what a rung reads and
the report that `ladder.diagnoser.report.render` prints, so a climb can stop on one machine and resume on
another (`ladder diagnose --from report.json`).

Policy, applied before every rung (each decision is recorded with its reason):
- a rung outside `--rungs` is not climbed;
- rung 1 (pattern triage) always runs: it is cheap and, in practice, explains most slow kernels;
- rung 2 (profiling) runs when there is a device; without one it is skipped and the gap to the
  roofline stays unknown, so rungs 3 and 4 are climbed regardless;
- rungs 3 and 4 run only while the findings do not explain the measured gap (`ladder.diagnoser.gap`);
  once they do, the climb stops there (`exhaustive=True` climbs anyway);
- a rung whose tools are missing here (`RungUnavailable`) records why and the climb goes on; so
  does a rung that fails, with its error: the rungs above can still use what the others found;
- a rung that runs past its time limit is stopped and recorded as failed (`timed_out`), and the
  climb goes on the same way;
- a subject that launches no Triton kernel (`NothingLaunched`) ends the climb: there is nothing
  to explain, and the state says so in `error`;
- Ctrl-C (or SIGTERM through the command line) ends the climb at once: the rung running is
  recorded as interrupted, the rungs above as not climbed, and `ClimbInterrupted` carries the
  state so far, so the caller still prints what was found.

A later rung's findings confirm or veto the earlier ones (`ladder.diagnoser.agreement.fold`): a confirmed
finding keeps all its evidence at its highest confidence, a vetoed one moves to `vetoed` with why.

With `limits` (seconds per rung name; None for no limit), every rung runs in a child process of
its own (`ladder.runner.timelimit`), which is what can stop a compile hung in C++; without, rungs run in
this process, as the batched climbs of `ladder.diagnoser.batch` and recorded rungs in tests do.
"""
from __future__ import annotations

import functools
import re
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ladder.diagnoser import agreement, gap, rungs
from ladder.diagnoser.subject import NothingLaunched, RungUnavailable, Subject
from ladder.runner.capture.picks import choices_recorded

SCHEMA = "ladder.diagnose/1"

# Default time limits (seconds): far above what a rung takes on a kernel that compiles (seconds
# on the H200, a minute for an autotuned kernel compiled ahead of time on a CPU), so that only a
# hang reaches them. Profiling includes Nsight Compute's replays; IR capture compiles every
# specialization the subject launches.
RUNG_TIMEOUTS_S: dict[str, float] = {"triage": 300.0, "profile": 900.0, "ir": 600.0, "compiler": 300.0}


class ClimbInterrupted(KeyboardInterrupt):
    """Ctrl-C during a climb; `state` is the report of the rungs done so far."""

    def __init__(self, state: dict, message: str):
        super().__init__(message)
        self.state = state


@dataclass
class Rung:
    number: int
    title: str
    run: Callable[[Subject, dict], dict]
    needs_device: bool = False
    outputs: tuple[str, ...] = field(default_factory=tuple)


RUNGS: dict[str, Rung] = {
    "triage": Rung(1, "pattern triage", rungs.triage),
    "profile": Rung(2, "profiling", rungs.profile, needs_device=True, outputs=("profile",)),
    "ir": Rung(3, "IR attribution", rungs.ir, outputs=("facts", "profile")),
    "compiler": Rung(4, "compiler source", rungs.compiler, outputs=("citations",)),
}


def measured_rungs(measured: dict) -> dict[str, Rung]:
    """The ladder with rung 2 read from measurements already taken (``rungs.replayed_profile``)
    instead of a second device run."""
    steps = dict(RUNGS)
    old = steps["profile"]
    steps["profile"] = Rung(old.number, old.title, functools.partial(rungs.replayed_profile, measured),
                            old.needs_device, old.outputs)
    return steps


def new_state(subject: Subject) -> dict:
    return {"schema": SCHEMA, "subject": subject.to_dict(), "rungs": [], "findings": [], "profile": None,
            "facts": [], "citations": [], "gap": gap.assess(None, []), "reached": 0, "warnings": []}


def decide(rung: Rung, subject: Subject, state: dict, selected: set[int], exhaustive: bool) -> tuple[bool, str]:
    """Whether to climb `rung` now, and why (one line for the report)."""
    if rung.number not in selected:
        return False, f"not requested (--rungs {_span(selected)})"
    if rung.number == 1:
        return True, "first rung: match the source against the catalog of known slow patterns"
    if rung.needs_device and subject.device is None:
        return False, f"no device on this machine (backend {subject.backend}): profiling needs one; the gap to the roofline stays unmeasured"
    if rung.number == 2:
        return True, "the gap between measured time and the roofline floor is unknown until measured"
    verdict = state["gap"]
    if verdict["explained"] and not exhaustive:
        return False, f"stopped: {verdict['why']}"
    if verdict["explained"]:
        return True, f"--exhaustive: climbing although {verdict['why']}"
    return True, verdict["why"]


def _span(selected: set[int]) -> str:
    ordered = sorted(selected)
    if ordered == list(range(ordered[0], ordered[-1] + 1)):
        return f"{ordered[0]}-{ordered[-1]}" if len(ordered) > 1 else str(ordered[0])
    return ",".join(map(str, ordered))


def _merge(state: dict, rung: Rung, output: dict) -> None:
    """Add a rung's findings to the state's. A finding already there is replaced by the later
    rung's version of it when that one carries all its evidence and more (rung 3's triage merges
    the source rule with the IR fact that confirms it): the state keeps the corroborated finding,
    not the guess."""
    at = {_finding_key(f): index for index, f in enumerate(state["findings"])}
    for finding in output.get("findings", []):
        key = _finding_key(finding)
        if key not in at:
            at[key] = len(state["findings"])
            state["findings"].append(finding)
        elif _extends(finding, state["findings"][at[key]]):
            state["findings"][at[key]] = finding
    for key in rung.outputs:
        if key in output:
            state[key] = output[key]
    state["warnings"].extend(output.get("warnings", []))


def _extends(later: dict, earlier: dict) -> bool:
    """Whether `later` is `earlier` with more evidence (from a higher rung)."""
    if later.get("rung", 0) <= earlier.get("rung", 0):
        return False
    have = {repr(sorted(item.items())) for item in later.get("evidence", [])}
    return all(repr(sorted(item.items())) in have for item in earlier.get("evidence", []))


def _finding_key(finding: dict) -> tuple:
    return (finding.get("pattern"), finding.get("kernel"), finding.get("file"), finding.get("line"),
            None if finding.get("pattern") else finding.get("title"))


def climb(subject: Subject, state: dict | None = None, selected: set[int] | None = None,
          exhaustive: bool = False, rungs: dict[str, Rung] | None = None,
          progress: Callable[[str], None] | None = None,
          limits: dict[str, float | None] | None = None) -> dict:
    """Run the ladder and return the state. Rungs already run in `state` are kept, not rerun."""
    rungs = RUNGS if rungs is None else rungs
    selected = set(selected or {1, 2, 3, 4})
    state = state if state is not None else new_state(subject)
    # Kept from an earlier climb: what ran, except a rung cut off by Ctrl-C, which runs again.
    done = {r["rung"]: r for r in state["rungs"] if r["ran"] and not r.get("interrupted")}
    state.pop("error", None)
    state.pop("stopped", None)
    records = []
    ended: str | None = None  # why the climb ended early: nothing was launched
    try:
        with choices_recorded():
            for name, rung in rungs.items():
                if rung.number in done:
                    records.append(done[rung.number])
                    if done[rung.number].get("nothing_launched"):
                        ended = state["error"] = done[rung.number]["error"]
                    continue
                climb_it, why = (False, f"not climbed: {ended}") if ended else decide(rung, subject, state, selected,
                                                                                      exhaustive)
                record = {"rung": rung.number, "name": name, "title": rung.title, "ran": False, "why": why,
                          "status": "skipped", "seconds": 0.0, "error": None}
                records.append(record)
                if climb_it:
                    if progress:
                        progress(f"rung {rung.number}: {rung.title}")
                    ended = _climb_rung(name, rung, subject, state, record, limits)
                state["gap"] = gap.assess(state.get("profile"), state["findings"])
    except KeyboardInterrupt as interrupt:
        during = next((r for r in records if r.get("interrupted")), None)
        _finish(state, records, rungs, done, "interrupted" + (f" during rung {during['rung']} ({during['title']})"
                                                              if during else ""))
        raise ClimbInterrupted(state, state["stopped"]) from interrupt
    _finish(state, records, rungs, done, None)
    return state


def _climb_rung(name: str, rung: Rung, subject: Subject, state: dict, record: dict,
                limits: dict[str, float | None] | None) -> str | None:
    """Run one rung into its record and the state; what ends the climb, if anything does."""
    started = time.perf_counter()
    try:
        output = _run(name, rung, subject, state, limits)
    except RungUnavailable as unavailable:
        record["why"] = f"{record['why']}; but it cannot run here: {unavailable}"
    except NothingLaunched as nothing:
        record.update(ran=True, status="failed", error=str(nothing), nothing_launched=True)
        state["error"] = str(nothing)
    except KeyboardInterrupt:
        seconds = round(time.perf_counter() - started, 3)
        record.update(ran=True, status="failed", interrupted=True, error=f"interrupted after {seconds:g} s")
        raise
    except Exception as error:  # noqa: BLE001 - a failing rung must not take the others' evidence down
        from ladder.runner.timelimit import TimedOut

        record.update(ran=True, status="failed", error=_one_line(error))
        if where := _raised_at(error):
            record["where"] = where
        if isinstance(error, TimedOut):
            record["timed_out"] = True
    else:
        _merge(state, rung, output)
        agreement.fold(state, output)
        record.update(ran=True, status="ok", summary=output.get("summary", ""))
    finally:
        record["seconds"] = round(time.perf_counter() - started, 3)
    return state.get("error")


def _run(name: str, rung: Rung, subject: Subject, state: dict, limits: dict[str, float | None] | None) -> dict:
    if limits is None:
        return rung.run(subject, state)
    from ladder.runner import timelimit

    return timelimit.call(rung.run, (subject, state), timeout=limits.get(name),
                          expected=(RungUnavailable, NothingLaunched))


def _one_line(error: Exception) -> str:
    from ladder.runner.timelimit import Failed, TimedOut

    if isinstance(error, TimedOut):
        return f"timed out: stopped after {error.seconds:g} s, its limit (--rung-timeout sets it)"
    if isinstance(error, Failed):
        return str(error)
    return f"{type(error).__name__}: {error}".splitlines()[0]


def _raised_at(error: Exception) -> str | None:
    """`file:line in function` of the innermost frame that raised, so a failed rung's record says where
    without a traceback (a rung run in a child process brings its traceback back as text)."""
    from ladder.runner.timelimit import Failed

    if isinstance(error, Failed):
        frames = re.findall(r'File "([^"]+)", line (\d+), in (\S+)', error.detail or "")
    else:
        frames = [(f.filename, f.lineno, f.name) for f in traceback.extract_tb(error.__traceback__)]
    if not frames:
        return None
    filename, line, function = frames[-1]
    return f"{Path(filename).name}:{line} in {function}"


def _finish(state: dict, records: list[dict], rungs: dict[str, Rung], done: dict[int, dict], stopped: str | None) -> None:
    """The rungs' records in ladder order (those never reached: not climbed) and what was reached."""
    reached = {r["rung"] for r in records}
    for name, rung in rungs.items():
        if rung.number not in reached:
            records.append(done.get(rung.number) or {
                "rung": rung.number, "name": name, "title": rung.title, "ran": False,
                "why": f"not climbed: {stopped}", "status": "skipped", "seconds": 0.0, "error": None})
    if stopped:
        state["stopped"] = stopped
        state["error"] = stopped
    state["rungs"] = sorted(records, key=lambda r: r["rung"])
    state["reached"] = max((r["rung"] for r in state["rungs"] if r["ran"]), default=0)
