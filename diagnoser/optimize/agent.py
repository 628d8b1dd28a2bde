"""The agent protocol over a run directory: submit a candidate, read the brief, ask where the run stands.

``ladder optimize SOLUTION --proposer agent`` runs the baseline and stops at round 1's brief
(``proposers.agent``). From then on each ``submit`` resumes the same loop, with the same gate and
journal as every other proposer, for exactly one candidate:

- the candidate answers one round: ``--round`` or, without it, the round of the last brief the
  journal records waiting for. A round the journal already has is never recorded again (a
  resubmission after a kill, a second agent): the reply says so and the run goes on to its next
  brief, written afresh if the kill came before it was;
- submissions are one at a time (a lock on the run directory);
- the run's own files are checked against the journal's hashes before anything is gated, since the
  agent can write there: only the candidate it submits is read from it.

``status`` and ``brief`` only read. The MCP server (``ladder.diagnoser.mcp``) calls the same functions.
"""
from __future__ import annotations

import contextlib
import fcntl
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from ladder.diagnoser.optimize.gate import GateSettings
from ladder.diagnoser.optimize.journal import Journal, JournalError
from ladder.diagnoser.optimize.loop import Diagnose, Gate, Settings, load_run, optimize
from ladder.diagnoser.optimize.proposers.agent import BRIEF_MD, AgentProposer, Candidate
from ladder.diagnoser.optimize.proposers.rules import source_hash

LOCK = ".submit.lock"


class AgentError(Exception):
    """A submission that cannot be taken (one line, for the agent): a finished run, another round."""


@dataclass
class Submitted:
    round: int
    recorded: bool  # False: that round was already in the journal (nothing recorded twice)
    candidate: dict[str, Any]  # the journal's entry for the round's candidate: id, summary, outcome
    status: dict[str, Any]
    brief: str | None  # the next brief, when the run waits for one

    def to_dict(self) -> dict[str, Any]:
        return {"round": self.round, "recorded": self.recorded, "candidate": self.candidate, "status": self.status,
                "brief": self.brief}


def submit(folder: str | Path, source: str, summary: str = "", round_number: int | None = None, *,
           gate: Gate | None = None, diagnose: Diagnose | None = None,
           progress: Callable[[str], None] = lambda line: None) -> Submitted:
    """Gate and record one candidate for one round of an agent run, and write the next brief."""
    folder = Path(folder)
    journal = load_run(folder)
    header = journal.header()
    if header.get("proposer") != "agent":
        raise AgentError(f"{folder} is a run of the {header.get('proposer')} proposer; submit answers --proposer agent runs")
    with _locked(folder):
        now = status(folder)
        if now["state"] == "finished":
            raise AgentError(f"the run has finished ({now['reason']}); nothing was recorded")
        number = round_number if round_number is not None else now["waiting_for"]
        done = {record["round"]: record for record in journal.rounds()}
        if number not in done and number != journal.last_round() + 1:
            raise AgentError(f"round {number} is not the one the run waits for (round {journal.last_round() + 1})")
        _check_own_files(journal)
        candidate = Candidate(number, source, summary) if number not in done else None
        optimize(folder / "initial.py", header["problem"], folder, AgentProposer(folder, candidate),
                 settings_of(header), resume=True, gate=gate, diagnose=diagnose, progress=progress)
        record = next((r for r in journal.rounds() if r["round"] == number), None)
        after = status(folder)
        if record is None:
            raise AgentError(f"the run stopped before round {number} ({after['reason']}); nothing was recorded")
        entry = {key: record["proposals"][0].get(key) for key in ("id", "summary", "source_hash", "outcome")}
        entry["same_as_submitted"] = entry["source_hash"] == source_hash(source)
        return Submitted(number, number not in done, entry, after,
                         current_brief(folder) if after["state"] == "waiting" else None)


def status(folder: str | Path) -> dict[str, Any]:
    """Where the run stands, from its journal alone."""
    folder = Path(folder)
    journal = load_run(folder)
    header, records, rounds = journal.header(), journal.records(), journal.rounds()
    last, best = records[-1], journal.best()
    stops = [r for r in records if r.get("kind") == "stop"]
    if last.get("kind") == "stop":
        state = "finished" if last.get("final") else "waiting" if header.get("proposer") == "agent" else "paused"
        reason = last.get("reason")
    else:
        state, reason = "unfinished", "stopped between rounds (killed?), or still running: resume continues it"
    latest = rounds[-1] if rounds else None
    return {
        "run": str(folder), "problem": header["problem"], "proposer": header.get("proposer"), "state": state,
        "reason": reason, "rounds": journal.last_round(),
        # the round of the last brief a stop announced: what a submission without --round answers
        "waiting_for": None if state == "finished" else (stops[-1]["after_round"] + 1) if stops
        else journal.last_round() + 1,
        "best": {"round": best["round"], "file": str(folder / "best.py"),
                 "geomean_vs_initial": best.get("geomean_vs_initial")},
        "last_round": None if latest is None else {
            "round": latest["round"], "accepted": latest.get("accepted"),
            "candidates": [{"id": p["id"], "summary": p["summary"], "accepted": bool((p.get("outcome") or {}).get("accepted")),
                            "reason": (p.get("outcome") or {}).get("reason")} for p in latest.get("proposals", [])]},
        "brief": str(folder / BRIEF_MD) if state == "waiting" and (folder / BRIEF_MD).is_file() else None,
    }


def current_brief(folder: str | Path) -> str:
    """The brief the run waits on, as Markdown."""
    path = Path(folder) / BRIEF_MD
    if not path.is_file():
        raise AgentError(f"{folder} has no brief: the run is not waiting for an agent (ladder optimize status {folder})")
    return path.read_text()


def wait_until_finished(folder: str | Path, on_round: Callable[[dict[str, Any]], None], poll_s: float = 1.0) -> dict[str, Any]:
    """Block while others submit, reporting each round as the journal records it, until the run finishes."""
    journal = Journal(folder)
    seen = journal.last_round()
    while True:
        for record in journal.rounds():
            if record["round"] > seen:
                seen = record["round"]
                on_round(record)
        now = status(folder)
        if now["state"] == "finished":
            return now
        time.sleep(poll_s)


def settings_of(header: dict[str, Any]) -> Settings:
    """The run's settings as its baseline recorded them (a submission runs the loop exactly as the run began)."""
    recorded = dict(header["settings"])
    recorded["gate"] = GateSettings(**recorded.get("gate", {}))
    recorded["rungs"] = tuple(recorded.get("rungs", (1, 2, 3, 4)))
    recorded["deadline"] = None  # a deadline is one call's, never the run's
    known = {key: value for key, value in recorded.items() if key in Settings.__dataclass_fields__}
    return Settings(**known)


def _check_own_files(journal: Journal) -> None:
    """The initial version and the best are the journal's, byte for byte (the agent can write in the run)."""
    header, best = journal.header(), journal.best()
    for name, digest in (("initial.py", header["best"]["source_hash"]), (best["file"], best["source_hash"])):
        path = journal.folder / name
        if not path.is_file() or source_hash(path.read_text()) != digest:
            raise JournalError(f"{path} is not the file the journal recorded (changed or removed after ladder wrote "
                               "it): restore it, or start a new run")


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    with open(folder / LOCK, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
