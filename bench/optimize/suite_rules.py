"""``ladder suite --optimize --proposer rules`` on the GPU machine, in pieces that fit one device call.

    PYTHONPATH=. python3 bench/optimize/suite_rules.py --runs .runs/suite-rules --deadline 480 [--only NAME ...]

Operators are optimized in suite order until ``--deadline`` seconds have passed (an operator is
not started with less than ``--reserve`` seconds left); every operator's run directory is
resumable, so the next call (with the same ``--runs``, carried back to the machine) continues
where this one stopped. The summary document goes to ``--output`` and the run directories, packed,
to ``--pack`` (one file travels back more easily than a tree).
"""
from __future__ import annotations

import argparse
import json
import sys
import tarfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from ladder.diagnoser.optimize import suite as optimized  # noqa: E402
from ladder.diagnoser.optimize.gate import GateSettings  # noqa: E402
from ladder.diagnoser.optimize.journal import Journal  # noqa: E402
from ladder.diagnoser.optimize.loop import Settings  # noqa: E402
from ladder.diagnoser.suite.operators import discover  # noqa: E402


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=Path, required=True)
    parser.add_argument("--deadline", type=float, default=480.0, help="seconds for this call")
    parser.add_argument("--reserve", type=float, default=120.0, help="do not start an operator with less left")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--operator-budget", type=float, default=240.0)
    parser.add_argument("--only", nargs="*", default=())
    parser.add_argument("--output", type=Path)
    parser.add_argument("--pack", type=Path)
    args = parser.parse_args(argv)
    started = time.monotonic()
    settings = Settings(rounds=args.rounds, budget_s=args.operator_budget, gate=GateSettings(backend="cuda"))
    operators = discover(only=tuple(args.only))
    rows = []

    def say(line: str) -> None:
        print(f"[{time.monotonic() - started:6.1f} s] {line}", flush=True)

    try:
        for op in operators:
            left = args.deadline - (time.monotonic() - started)
            folder = args.runs / op.key
            last = Journal(folder).records()[-1] if Journal(folder).exists() else {}
            finished = last.get("kind") == "stop" and last.get("final")
            if left < args.reserve and not finished:
                say(f"{op.key}: not started ({left:.0f} s left)")
                continue
            settings.deadline = started + args.deadline - 20.0
            document = optimized.optimize_suite([op], settings, "rules", args.runs, progress=say)
            rows += document["operators"]
            say(json.dumps(rows[-1], default=str))
    finally:  # an interrupted call still sends back what its journals hold: they resume from there
        if args.pack:
            with tarfile.open(args.pack, "w:gz") as pack:
                pack.add(args.runs, arcname=args.runs.name)
    document = {"proposer": "rules", "summary": optimized.summarize([r for r in rows if "error" not in r]),
                "operators": rows, "elapsed_s": round(time.monotonic() - started, 1)}
    if args.output:
        args.output.write_text(json.dumps(document, indent=1, default=str))
    print(optimized.table(document))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
