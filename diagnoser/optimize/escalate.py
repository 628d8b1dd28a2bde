"""Escalation: a new run that starts where another run stopped, with another proposer.

Rules run out where a kernel needs another algorithm; a model or an agent then takes over. Starting
that proposer from the initial version again would time the baseline a second time and throw the
rules' gains away (a candidate would have to find them again to count). ``ladder optimize --from
RUN`` instead copies RUN into the new run directory: its baseline (the same initial version, so
"initial -> best" keeps one meaning), its rounds as they were recorded (each names its proposer),
its candidates, diagnoses and best. The header names the new proposer and settings and says where
the run came from (``continued_from``); the copied stop lines are left out, since they ended the
other proposer's run. The new proposer's rounds continue the numbering, its briefs show the copied
rounds as history, and the run's limits (rounds, patience, budget) count its own rounds only.

The source is only read. The new journal is written last, atomically: a run directory without it
is no run, so a kill while copying leaves nothing a resume would take for a run, and the next
``--from`` copies again.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from ladder.diagnoser.optimize.journal import Journal, JournalError, write_atomically
from ladder.diagnoser.optimize.proposers.rules import source_hash

COPIED_FOLDERS = ("candidates", "diagnoses")


def seed_from(journal: Journal, source: Path, *, problem: Path, initial: Path, proposer: str,
              settings: dict[str, Any]) -> None:
    """Write ``journal``'s folder as the continuation of the run in ``source``; raise ``JournalError``
    (one line) when the source cannot be continued as this run: another problem, another initial
    version, a problem file changed since, or no complete journal."""
    origin = Journal(source)
    if not origin.exists():
        raise JournalError(f"--from {source}: no optimization journal there")
    origin_header = origin.header()
    _check_same_problem(origin, origin_header, problem, initial)
    records = origin.records()
    rounds = [r for r in records if r.get("kind") == "round"]
    stops = [r for r in records if r.get("kind") == "stop"]
    header = {**origin_header, "problem": str(problem.resolve()), "solution": str(initial.resolve()),
              "proposer": proposer, "settings": settings,
              "continued_from": {"run": str(source.resolve()), "proposer": origin_header.get("proposer"),
                                 "after_round": rounds[-1]["round"] if rounds else 0,
                                 "stopped": stops[-1].get("reason") if stops else None}}
    best = origin.best()
    best_source = (source / best["file"]).read_text() if (source / best["file"]).is_file() else None
    if best_source is None or source_hash(best_source) != best["source_hash"]:
        raise JournalError(f"--from {source}: {best['file']} is not the best its journal recorded")
    folder = journal.folder
    for name in COPIED_FOLDERS:
        if (source / name).is_dir():
            shutil.copytree(source / name, folder / name, dirs_exist_ok=True)
        (folder / name).mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source / "initial.py", folder / "initial.py")
    write_atomically(folder / "best.py", best_source.encode())
    write_atomically(journal.path, "".join(json.dumps(r) + "\n" for r in (header, *rounds)).encode())


def own_rounds(journal: Journal) -> list[dict[str, Any]]:
    """The rounds this run's own proposer played (all of them, for a run that was not continued)."""
    after = (journal.header().get("continued_from") or {}).get("after_round", 0)
    return [r for r in journal.rounds() if r["round"] > after]


def _check_same_problem(origin: Journal, header: dict[str, Any], problem: Path, initial: Path) -> None:
    """The same problem (by content where the journal recorded it, so a run moved between machines can
    be continued) and the same initial version, byte for byte."""
    recorded = header.get("problem_hash")
    if recorded is None and Path(header["problem"]).resolve() != problem.resolve():
        raise JournalError(f"--from {origin.folder} is a run of {header['problem']}, not of {problem}")
    if recorded not in (None, source_hash(problem.read_text())):
        raise JournalError(f"--from {origin.folder} is a run of {header['problem']}, and {problem} is not that "
                           "problem as it was then (changed since, or another one): its timings do not hold for it")
    if header["best"]["source_hash"] != source_hash(initial.read_text()):
        raise JournalError(f"--from {origin.folder} began from another initial version than {initial}: "
                           "its speedups would be measured against another kernel")
