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
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from ladder.diagnoser.optimize import suite as optimized  # noqa: E402
from ladder.diagnoser.optimize.journal import Journal  # noqa: E402
from ladder.diagnoser.suite.operators import discover  # noqa: E402


def document(runs: Path, proposer: str, over: Path | None = None) -> dict:
    rows = []
    for op in discover():
        folder = optimized.source_run(runs, op.key) or optimized.source_run(over, op.key)
        rows.append(optimized.operator_row(op.key, Journal(folder)) if folder else {"operator": op.key, "error": "not run yet"})
    return {"proposer": proposer, "summary": optimized.summarize(rows), "operators": rows, "stopped": None,
            **({"over": str(over)} if over is not None else {})}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=Path, required=True)
    parser.add_argument("--proposer", default="rules")
    parser.add_argument("--over", type=Path, help="the runs these continued: operators with no run here are read there")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--html", type=Path)
    args = parser.parse_args(argv)
    found = document(args.runs, args.proposer, args.over)
    if args.json:
        args.json.write_text(json.dumps(found, indent=1, default=str) + "\n")
    if args.html:
        optimized.write_pages(found, args.runs, args.html)
    print(optimized.table(found))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
