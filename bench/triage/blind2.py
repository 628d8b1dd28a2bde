"""Precision and recall of triage on the second blind set (tests/triage/blind2), per catalog id and
overall, on the CPU: the source rung, and the source rung plus rung-3 facts compiled ahead of time.

    PYTHONPATH=. python3 bench/triage/blind2.py [--no-ir] [--facts-cache DIR] [--out bench/results/triage-blind2.json]

The set was written and labeled without reading the detectors, the catalog entries or the other
labeled sets, and committed before this script first ran, so it measures how triage generalises to
kernels its authors never saw; the scoring is `labeled.py`'s (one count per kernel and id, at the
default confidence threshold). IR facts come from the `aot` backend for NVIDIA kernels and from
Triton-Ascend's ttadapter for Ascend kernels (those importing torch_npu) where that environment is
installed; without it they are scored on the source rung.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BLIND2 = ROOT / "tests" / "triage" / "blind2"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from labeled import evaluate, table  # noqa: E402  (bench/triage/labeled.py: the shared scoring)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-ir", action="store_true", help="score the source rung only")
    parser.add_argument("--facts-cache", type=Path, help="keep rung-3 facts per kernel in this folder (labeled.py)")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "triage-blind2.json"))
    args = parser.parse_args()
    reports = {"source": evaluate(BLIND2, with_ir=False)}
    if not args.no_ir:
        reports["source+ir"] = evaluate(BLIND2, with_ir=True, facts_cache=args.facts_cache)
    for label, report in reports.items():
        print(f"== {label} ({report['kernels']} kernels)")
        for name, row in report["per_kernel"].items():
            if row["missed"] or row["extra"]:
                print(f"{name}: missed {row['missed']} extra {row['extra']}")
        print(table(report))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(reports, indent=1) + "\n")


if __name__ == "__main__":
    main()
