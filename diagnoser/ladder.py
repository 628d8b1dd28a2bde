"""The escalation policy: climb rung 1 -> 2 -> 3 -> 4 only as far as the evidence requires.

The ladder is a plain ordered mapping of named rungs (like Triton's compile stages): each rung is
a function from the subject and the state so far to a dict of new outputs (always `findings`, plus
`profile`, `facts` or `citations`). The state is a JSON-able dict: it is both what a rung reads and
the report that `diagnoser.report.render` prints, so a climb can stop on one machine and resume on
another (`ladder diagnose --from report.json`).

Policy, applied before every rung (each decision is recorded with its reason):
- a rung outside `--rungs` is not climbed;
- rung 1 (pattern triage) always runs: it is cheap and, in practice, explains most slow kernels;
- rung 2 (profiling) runs when there is a device; without one it is skipped and the gap to the
  roofline stays unknown, so rungs 3 and 4 are climbed regardless;
- rungs 3 and 4 run only while the findings do not explain the measured gap (`diagnoser.gap`);
  once they do, the climb stops there (`exhaustive=True` climbs anyway);
- a rung whose tools are missing here (`RungUnavailable`) records why and the climb goes on; so
  does a rung that fails, with its error: the rungs above can still use what the others found.

A later rung's findings confirm or veto the earlier ones (`diagnoser.agreement.fold`): a confirmed
finding keeps all its evidence at its highest confidence, a vetoed one moves to `vetoed` with why.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from diagnoser import agreement, gap, rungs
from diagnoser.subject import RungUnavailable, Subject

SCHEMA = "ladder.diagnose/1"


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
    seen = {_finding_key(f) for f in state["findings"]}
    for finding in output.get("findings", []):
        if _finding_key(finding) not in seen:
            state["findings"].append(finding)
            seen.add(_finding_key(finding))
    for key in rung.outputs:
        if key in output:
            state[key] = output[key]
    state["warnings"].extend(output.get("warnings", []))


def _finding_key(finding: dict) -> tuple:
    return (finding.get("pattern"), finding.get("kernel"), finding.get("file"), finding.get("line"),
            None if finding.get("pattern") else finding.get("title"))


def climb(subject: Subject, state: dict | None = None, selected: set[int] | None = None,
          exhaustive: bool = False, rungs: dict[str, Rung] | None = None,
          progress: Callable[[str], None] | None = None) -> dict:
    """Run the ladder and return the state. Rungs already run in `state` are kept, not rerun."""
    rungs = RUNGS if rungs is None else rungs
    selected = set(selected or {1, 2, 3, 4})
    state = state if state is not None else new_state(subject)
    done = {r["rung"]: r for r in state["rungs"] if r["ran"]}
    records = []
    for name, rung in rungs.items():
        if rung.number in done:
            records.append(done[rung.number])
            continue
        climb_it, why = decide(rung, subject, state, selected, exhaustive)
        record = {"rung": rung.number, "name": name, "title": rung.title, "ran": False, "why": why,
                  "status": "skipped", "seconds": 0.0, "error": None}
        if climb_it:
            if progress:
                progress(f"rung {rung.number}: {rung.title}")
            started = time.perf_counter()
            try:
                output = rung.run(subject, state)
            except RungUnavailable as unavailable:
                record["why"] = f"{why}; but it cannot run here: {unavailable}"
            except Exception as error:  # a failing rung must not take the others' evidence down
                record.update(ran=True, status="failed", error=f"{type(error).__name__}: {error}".splitlines()[0])
            else:
                _merge(state, rung, output)
                agreement.fold(state, output)
                record.update(ran=True, status="ok", summary=output.get("summary", ""))
            record["seconds"] = round(time.perf_counter() - started, 3)
        records.append(record)
        state["gap"] = gap.assess(state.get("profile"), state["findings"])
    state["rungs"] = records
    state["reached"] = max((r["rung"] for r in state["rungs"] if r["ran"]), default=0)
    return state
