"""The ``agent`` proposer: an external coding agent answers each round's brief with one candidate.

The loop cannot call an agent, so this proposer works in two halves. When it has no candidate for
the round, it writes what the agent needs into the run directory and pauses the run (``Paused``):

``brief.md``           the brief as the agent reads it (``Brief.to_markdown``, cut to ``--evidence``)
                       and how to answer it;
``brief.json``         the same brief as data, with the round, the files and the submit command;
``work/solution.py``   a copy of the best solution so far: the file to edit.

``ladder optimize submit`` (``ladder.diagnoser.optimize.agent``) then resumes the run with the agent's
candidate handed to this proposer, which proposes exactly it for exactly that round; the loop gates
and records it as it would any other proposer's, and the next round's brief is written the same way.
The files above are ladder's output: nothing in them is read back.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ladder.diagnoser.optimize.brief import Brief
from ladder.diagnoser.optimize.journal import write_atomically
from ladder.diagnoser.optimize.proposers import Paused, Proposal, named_findings

BRIEF_MD, BRIEF_JSON, WORK_SOLUTION = "brief.md", "brief.json", "work/solution.py"


@dataclass
class Candidate:
    """What the agent submitted, and the round it answers."""

    round: int
    source: str
    summary: str = ""


class AgentProposer:
    name = "agent"

    def __init__(self, run: str | Path, candidate: Candidate | None = None, **settings: Any):
        self.folder = Path(run)
        self.candidate = candidate

    def propose(self, brief: Brief, count: int) -> list[Proposal]:
        candidate, self.candidate = self.candidate, None
        if candidate is not None and candidate.round == brief.round:
            return [Proposal(candidate.source, candidate.summary or "the agent's candidate",
                             patterns=sorted({f["pattern"] for f in named_findings(brief, candidate.summary)}),
                             evidence=named_findings(brief, candidate.summary))]
        write_brief(self.folder, brief)
        raise Paused(waiting_reason(self.folder, brief.round))


def waiting_reason(folder: Path, round_number: int) -> str:
    return (f"waiting for the agent's candidate for round {round_number} "
            f"(ladder optimize submit {folder} CANDIDATE.py --round {round_number})")


def submit_command(folder: Path, round_number: int) -> list[str]:
    return ["ladder", "optimize", "submit", str(folder), str(folder / WORK_SOLUTION), "--round", str(round_number),
            "--summary", "WHAT YOU CHANGED AND WHY"]


def write_brief(folder: Path, brief: Brief) -> None:
    """The round's brief for the agent, and the file it edits (the best so far)."""
    work = folder / WORK_SOLUTION
    write_atomically(work, brief.best_source.encode())
    command = submit_command(folder, brief.round)
    document = {"round": brief.round, "run": str(folder), "evidence": brief.evidence_level,
                "files": {"edit": str(work), "problem": brief.problem_path, "best": brief.best_path},
                "submit": command, "brief": brief.to_dict()}
    write_atomically(folder / BRIEF_JSON, json.dumps(document, indent=1, default=str).encode())
    write_atomically(folder / BRIEF_MD, (brief.to_markdown() + answering(folder, brief.round, command)).encode())


def answering(folder: Path, round_number: int, command: list[str]) -> str:
    shown = " ".join(f'"{part}"' if " " in part else part for part in command)
    return "\n".join([
        "", "## How to answer", "",
        f"Edit `{folder / WORK_SOLUTION}` (a copy of the best solution so far) into a faster version, then submit it:",
        "", "```", shown, "```", "",
        "ladder's judge gates it against the best on fresh inputs: it is recorded as accepted only if it is "
        "correct on every case, passes the guards and is faster than the best by more than the measured spread. "
        f"One candidate per round; the reply prints the verdict and the next brief. `ladder optimize status {folder}` "
        "says where the run stands. Nothing else you write in the run directory is read.", ""])
