"""``ladder suite --optimize``: the loop over every operator of the suite, resumable per operator.

Each operator gets a run directory of its own under ``OUT/<level>/<operator>``; an operator whose
journal exists is resumed (and one whose run already stopped costs a glance at its journal). The
summary is read from the journals alone: per operator the initial -> best speedup, against eager
and torch.compile, % of the roofline before and after, the round of the best and the patterns
behind each accepted change; across operators the geometric mean and median.

A run counts once it has a result: finished, or waiting for an agent's next round after at least
one round (its own, or the run's it continued): its best stands, and a later round replaces it only
with a faster one. A run a call's deadline cut is listed and not counted: its figures so far are
often the baseline alone.
"""
from __future__ import annotations

import os
import statistics
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable

from ladder.diagnoser.optimize import report
from ladder.diagnoser.optimize.gate import geomean, run_gate
from ladder.diagnoser.optimize.journal import Journal, JournalError
from ladder.diagnoser.optimize.loop import DEADLINE, OptimizeError, Settings, optimize
from ladder.diagnoser.optimize.proposers import load_proposer


def optimize_suite(operators: list[Any], settings: Settings, proposer: str, out: Path, *,
                   progress: Callable[[str], None] = lambda line: None,
                   on_operator: Callable[[dict[str, Any]], None] = lambda row: None,
                   gate: Callable[..., Any] = run_gate, continue_from: Path | None = None) -> dict[str, Any]:
    """Optimize every operator (``ladder.diagnoser.suite.operators.Operator``); the suite's document.
    ``continue_from``: a suite's runs directory; an operator with a run there starts where it stopped."""
    rows = []
    stopped = None
    for op in operators:
        folder = out / op.key
        if stopped is not None:
            rows.append({"operator": op.key, "error": f"not run: {stopped}"})
            continue
        started = time.monotonic()
        try:
            optimize(op.solution, op.problem, folder, load_proposer(proposer, run=folder), settings,
                     resume=Journal(folder).exists(), continue_from=source_run(continue_from, op.key), gate=gate,
                     progress=lambda line, op=op: progress(f"{op.key}: {line}"))
            row = operator_row(op.key, Journal(folder))
        except (OptimizeError, JournalError) as error:
            row = {"operator": op.key, "error": str(error)}
            if "device was lost" in str(error):
                stopped = f"the device was lost during {op.key}"
        row["elapsed_s"] = round(time.monotonic() - started, 1)
        rows.append(row)
        on_operator(row)
    return {"proposer": proposer, "summary": summarize(rows), "operators": rows, "stopped": stopped}


def source_run(runs: Path | None, key: str) -> Path | None:
    """The operator's run in another suite's runs directory, where there is one to continue."""
    if runs is None or not Journal(runs / key).exists():
        return None
    return runs / key


def operator_row(key: str, journal: Journal) -> dict[str, Any]:
    document = report.build(journal)
    cases = document["cases"]
    return {
        "operator": key, "run": str(journal.folder), "rounds": document["rounds"], "best_round": document["best_round"],
        "speedup_vs_initial": document["geomean_vs_initial"], "speedup_vs_eager": document["geomean_vs_eager"],
        "speedup_vs_compile": document["geomean_vs_compile"],
        "roofline_before": geomean([c["roofline_before"] for c in cases]),
        "roofline_after": geomean([c["roofline_after"] for c in cases]),
        "patterns": sorted({p for change in document["changes"] for p in change["patterns"]}),
        "device_seconds": document["seconds"], "stopped": _stop_of(journal), "finished": finished(journal),
        "waiting": waiting(journal), "devices": document["devices"],
    }


def _stop_of(journal: Journal) -> str | None:
    last = journal.records()[-1]
    return last.get("reason") if last.get("kind") == "stop" else None


def finished(journal: Journal) -> bool:
    """Whether the run stopped for good: one stopped by a call's deadline or a pause resumes later,
    and its figures so far (often the baseline alone, 1.000x) must not be averaged as a result."""
    last = journal.records()[-1]
    return last.get("kind") == "stop" and bool(last.get("final"))


def waiting(journal: Journal) -> bool:
    """Whether the run is paused by its proposer (an agent that has not answered yet) after at least
    one round, its own or those of the run it continued: its best is a result as it stands, unlike a
    run the deadline cut."""
    last = journal.records()[-1]
    return (last.get("kind") == "stop" and not last.get("final") and last.get("reason") != DEADLINE
            and bool(journal.rounds()))


def counts(row: dict[str, Any]) -> bool:
    """Whether the row enters the suite's means: it has a speedup and a result (module docstring)."""
    return bool(row.get("speedup_vs_initial")) and (row.get("finished", True) or bool(row.get("waiting")))


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    counted = [row for row in rows if counts(row)]

    def spread(key: str) -> dict[str, float | None]:
        values = [row[key] for row in counted if row.get(key)]
        return {"geomean": geomean(values), "median": statistics.median(values) if values else None}

    return {"operators": len(rows), "counted": len(counted),
            "speedup_vs_initial": spread("speedup_vs_initial"), "speedup_vs_eager": spread("speedup_vs_eager"),
            "speedup_vs_compile": spread("speedup_vs_compile"), "roofline_before": spread("roofline_before"),
            "roofline_after": spread("roofline_after"),
            "slower_than_initial": [row["operator"] for row in counted if row["speedup_vs_initial"] < 1.0],
            "not_counted": [row["operator"] for row in rows if row not in counted],
            "waiting": [row["operator"] for row in rows if row.get("waiting")],
            "unfinished": [row["operator"] for row in rows if row.get("finished") is False and not row.get("waiting")],
            "devices": dict(Counter(card for row in counted for card in row.get("devices", [])).most_common())}


def table(document: dict[str, Any]) -> str:
    """The terminal table of ``ladder suite --optimize``."""
    header = ["operator", "rounds", "best", "x initial", "x eager", "x compile", "% roof before", "% roof after",
              "patterns"]
    lines = [header]
    for row in document["operators"]:
        if "error" in row:
            lines.append([row["operator"], "-", "-", "-", "-", "-", "-", "-", row["error"][:60]])
            continue
        name = row["operator"] + (" +" if row.get("waiting") else " *" if row.get("finished") is False else "")
        lines.append([name, str(row["rounds"]), str(row["best_round"]), _f(row["speedup_vs_initial"], "x"),
                      _f(row["speedup_vs_eager"], "x"), _f(row["speedup_vs_compile"], "x"),
                      _f(row["roofline_before"], "", 1), _f(row["roofline_after"], "", 1),
                      ", ".join(row["patterns"]) or "-"])
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    out = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip() for line in lines]
    out.insert(1, "  ".join("-" * width for width in widths))
    summary = document["summary"]
    out += ["", f"{summary['counted']}/{summary['operators']} operators: initial -> best geomean "
            f"{_f(summary['speedup_vs_initial']['geomean'], 'x')}, median {_f(summary['speedup_vs_initial']['median'], 'x')}; "
            f"vs eager {_f(summary['speedup_vs_eager']['geomean'], 'x')}; vs torch.compile "
            f"{_f(summary['speedup_vs_compile']['geomean'], 'x')}; % of roofline "
            f"{_f(summary['roofline_before']['geomean'], '', 1)} -> {_f(summary['roofline_after']['geomean'], '', 1)}"]
    if summary.get("devices"):
        out.append("timed on: " + ", ".join(f"{card} ({n})" for card, n in summary["devices"].items())
                   + "; each ratio on one card, the initial version timed beside the candidate")
    if summary.get("waiting"):
        out.append("+ waiting for its proposer's next round (an agent that has not answered), counted as it stands: " + ", ".join(summary["waiting"]))
    if summary.get("unfinished"):
        out.append("* unfinished (a later call resumes it), not counted: " + ", ".join(summary["unfinished"]))
    if summary["slower_than_initial"]:
        out.append("slower than the initial version: " + ", ".join(summary["slower_than_initial"]))
    return "\n".join(out) + "\n"


def write_pages(document: dict[str, Any], out: Path, page: Path) -> None:
    """Each run's HTML report into its run directory (``out``'s, or wherever the row's run is) and
    the suite's page to ``page``, linking to them: every figure comes from the journals, nothing is
    measured again."""
    from ladder.diagnoser.report import templating

    rows = []
    for row in document["operators"]:
        folder = Path(row["run"]) if "run" in row else out / row["operator"]
        if "error" not in row and Journal(folder).exists():
            (folder / "report.html").write_text(report.html(report.build(Journal(folder))))
            row = {**row, "page": os.path.relpath(folder / "report.html", page.parent)}
        rows.append(row)
    page.write_text(templating.render("optimize-suite.html.j2", d={**document, "operators": rows}, n=report.formatted))


def _f(value: float | None, suffix: str, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}{suffix}"
