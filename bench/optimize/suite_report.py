"""The suite's optimization results read from its run folders alone: the JSON document and the HTML
pages (the suite's, linking to each run's), nothing run or measured again.

    python bench/optimize/suite_report.py --runs bench/results/suite-rules \
        --json bench/results/suite-rules.json --html bench/results/suite-rules/index.html

Operators in suite order; one with no journal yet is listed as not run. With ``--over`` the runs
another proposer continued (an agent's over the rules'): an operator it has no run of is read
from there, so the figures are the two proposers' together, each operator counted once.

    python bench/optimize/suite_report.py --runs bench/results/suite-agent --proposer agent \
        --over bench/results/suite-rules --json bench/results/suite-agent.json \
        --html bench/results/suite-agent/index.html

With ``--recheck FILE ...`` (``recheck.py``'s records) each operator whose best was re-checked
carries its re-checks of that best (not of one a later round replaced), folded into one, beside its
journal's figure, and the summary says how many are correct, how many were judged on the card model
that accepted them and agree within the spread, and the suite's geomean with those re-checked
speedups in place of the journal's: a
journal's speedup over the initial version is one run on one unit, and the re-checks found it can
stand a few per cent high on another (``bench/results/suite-rules/README.md``, "Re-check").
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import recheck  # noqa: E402

from ladder.diagnoser.optimize import suite as optimized  # noqa: E402
from ladder.diagnoser.optimize.gate import geomean  # noqa: E402
from ladder.diagnoser.optimize.journal import Journal  # noqa: E402
from ladder.diagnoser.suite.operators import discover  # noqa: E402


def document(runs: Path, proposer: str, over: Path | None = None) -> dict:
    rows = []
    for op in discover():
        folder = optimized.source_run(runs, op.key) or optimized.source_run(over, op.key)
        rows.append(optimized.operator_row(op.key, Journal(folder)) if folder
                    else {"operator": op.key, "error": "not run yet"})
    return {"proposer": proposer, "summary": optimized.summarize(rows), "operators": rows, "stopped": None,
            **({"over": str(over)} if over is not None else {})}


def with_rechecks(found: dict, files: list[Path]) -> dict:
    """The document with each row's re-checks (the same run folder, re-judged as ``recheck.py`` reads
    its files) folded into one entry, and the summary's ``recheck`` entry."""
    samples: dict[Path, list[dict]] = {}
    for path in files:
        for row in recheck.present_records(path)[0]:
            samples.setdefault(_resolved(row["run"]), []).append({**row, "file": str(path)})
    rows = []
    for row in found["operators"]:
        run = _resolved(row["run"]) if row.get("run") else None
        rows.append({**row, "recheck": folded(samples[run])} if run in samples else row)
    return {**found, "operators": rows, "summary": {**found["summary"], "recheck": recheck_summary(rows)}}


def folded(records: list[dict]) -> dict:
    """An operator's re-checks as one: correct only if every one was, and the speedup the geomean of
    those timed on the card model that accepted the best (every sample counts; none is preferred),
    judged against the journal as ``recheck.py`` judges one."""
    judged = [record for record in records if record.get("within_spread") is not None]
    entry = {"samples": len(records), "files": [record["file"] for record in records],
             "correct": all(record.get("correct") for record in records),
             "devices": sorted({record["device"] for record in records if record.get("device")})}
    if judged:
        entry.update(recheck.compare_speed(geomean([record["speedup"] for record in judged]), judged[-1]))
        entry["timed_samples"] = len(judged)
    return entry


def recheck_summary(rows: list[dict]) -> dict:
    checked = [row for row in rows if "recheck" in row]
    judged = [row for row in checked if _timed_on_its_card(row)]
    counted = [row for row in rows if optimized.counts(row)]
    in_place = [row["recheck"]["speedup"] if _timed_on_its_card(row) else row["speedup_vs_initial"] for row in counted]
    return {"operators": len(checked),
            "incorrect": [row["operator"] for row in checked if not row["recheck"].get("correct")],
            "judged": len(judged),
            "outside_spread": {row["operator"]: row["recheck"]["ratio"] for row in judged
                               if not row["recheck"]["within_spread"]},
            "ratio_geomean": geomean([row["recheck"]["ratio"] for row in judged]) if judged else None,
            "speedup_vs_initial_geomean": geomean(in_place) if in_place else None}


def _timed_on_its_card(row: dict) -> bool:
    """Whether a row's re-checks include some timed on the card model that accepted its best (only
    those carry a verdict on the speed)."""
    return row.get("recheck", {}).get("within_spread") is not None


def recheck_lines(summary: dict) -> list[str]:
    if not summary:
        return []
    outside = ", ".join(f"{name} {ratio:.3f}" for name, ratio in summary["outside_spread"].items()) or "none"
    lines = [f"re-checked: {summary['operators']} operators, "
             + (f"wrong: {', '.join(summary['incorrect'])}" if summary["incorrect"] else "all correct")
             + (f"; {summary['judged']} timed on the card model that accepted them, outside the spread: {outside}"
                if summary["judged"] else "; none timed on the card model that accepted them")]
    if summary["judged"]:
        lines.append(f"re-check over journal, geomean {summary['ratio_geomean']:.3f}; initial -> best geomean with the "
                     f"re-checked speedups in place: {summary['speedup_vs_initial_geomean']:.3f}x")
    return lines


def _resolved(run: str) -> Path:
    return recheck.run_folder(run).resolve()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=Path, required=True)
    parser.add_argument("--proposer", default="rules")
    parser.add_argument("--over", type=Path, help="the runs these continued: operators with no run here are read there")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--html", type=Path)
    parser.add_argument("--recheck", type=Path, nargs="*", default=[], help="recheck.py's record files")
    args = parser.parse_args(argv)
    found = document(args.runs, args.proposer, args.over)
    if args.recheck:
        found = with_rechecks(found, args.recheck)
    if args.json:
        args.json.write_text(json.dumps(found, indent=1, default=str) + "\n")
    if args.html:
        optimized.write_pages(found, args.runs, args.html)
    print("\n".join([optimized.table(found).rstrip("\n"), *recheck_lines(found["summary"].get("recheck"))]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
