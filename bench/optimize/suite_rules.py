"""``ladder suite --optimize --proposer rules`` on the GPU machine, in pieces that fit one device call.

    PYTHONPATH=. python3 bench/optimize/suite_rules.py --runs .runs/suite-rules --deadline 480 [--only NAME ...]

Operators are optimized in suite order until ``--deadline`` seconds have passed (an operator is
not started with less than ``--reserve`` seconds left); every operator's run directory is
resumable, so the next call (with the same ``--runs``, carried back to the machine) continues
where this one stopped. The summary document goes to ``--output`` and the run directories, packed,
to ``--pack`` (one file travels back more easily than a tree).

With ``--ray local`` (a machine of several GPUs, Ray from ``bench/optimize/ray_wheels.py``) the
operators not finished yet run at once through ``ladder suite --optimize --ray``'s executor, each
gate leased one whole GPU, under the same deadline: pick with ``--only`` what fits one call.
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
    parser.add_argument("--ray", metavar="ADDRESS", help="run the unfinished operators at once on this Ray cluster")
    args = parser.parse_args(argv)
    started = time.monotonic()
    settings = Settings(rounds=args.rounds, budget_s=args.operator_budget, gate=GateSettings(backend="cuda"))
    operators = discover(only=tuple(args.only))
    rows = []

    def say(line: str) -> None:
        print(f"[{time.monotonic() - started:6.1f} s] {line}", flush=True)

    settings.deadline = started + args.deadline - 20.0
    try:
        if args.ray:
            from ladder.diagnoser.optimize import scale

            unfinished = [op for op in operators if not finished(args.runs / op.key)]
            rows += scale.optimize_suite_ray(unfinished, settings, "rules", args.runs, address=args.ray,
                                             echo=say)["operators"]
            for row in rows:
                say(json.dumps(row, default=str))
        else:
            for op in operators:
                left = args.deadline - (time.monotonic() - started)
                if left < args.reserve and not finished(args.runs / op.key):
                    say(f"{op.key}: not started ({left:.0f} s left)")
                    continue
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


def finished(folder: Path) -> bool:
    """Whether the operator's run in ``folder`` ended for good (not stopped by a call's deadline)."""
    return Journal(folder).exists() and optimized.finished(Journal(folder))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
