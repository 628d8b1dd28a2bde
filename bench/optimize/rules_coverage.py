"""Which of the rules proposer's mechanical fixes apply to each suite operator's initial version.

    python bench/optimize/rules_coverage.py --out bench/results/rules-coverage.md

Blind, on the CPU: every fix of the NVIDIA order is tried on the initial source and decides from the
source and the problem's traced cases alone whether it applies (the ``--evidence none`` mode of the
proposer), so the table is the most the rules can propose in a first round, before any diagnosis
narrows it. Operators where only the configuration search applies are where the rules run out
first and a rewrite by a model or an agent has to take over.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from ladder.diagnoser.optimize.proposers.rules import FIX_ORDERS, fixed  # noqa: E402
from ladder.diagnoser.suite.operators import discover  # noqa: E402


def coverage(only: tuple[str, ...] = ()) -> list[tuple[str, dict[str, str]]]:
    """(operator, {pattern: "applies" or why not}) for every suite operator."""
    rows = []
    for op in discover(only=only):
        source = Path(op.solution).read_text()
        outcome = {}
        for pattern in FIX_ORDERS["nvidia"]:
            rewritten, why = fixed(pattern, source, str(op.solution), str(op.problem))
            outcome[pattern] = "applies" if rewritten is not None else why
        rows.append((op.key, outcome))
    return rows


def markdown(rows: list[tuple[str, dict[str, str]]]) -> str:
    patterns = FIX_ORDERS["nvidia"]
    lines = ["| operator | " + " | ".join(p.removeprefix("nv.") for p in patterns) + " |",
             "|---|" + "---|" * len(patterns)]
    lines += [f"| {key} | " + " | ".join("x" if outcome[p] == "applies" else "" for p in patterns) + " |"
              for key, outcome in rows]
    config_only = [key for key, outcome in rows if [p for p in patterns if outcome[p] == "applies"] == [patterns[0]]]
    lines += ["", f"{len(rows)} operators; only the configuration search applies to {len(config_only)}: "
              + ", ".join(config_only)]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--only", nargs="*", default=())
    args = parser.parse_args(argv)
    text = markdown(coverage(tuple(args.only)))
    args.out.write_text(f"# Rules coverage of the suite\n\n    python bench/optimize/rules_coverage.py --out {args.out}\n\n"
                        + text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
