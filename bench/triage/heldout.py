"""Precision and recall of triage on the held-out kernels (tests/triage/heldout), per catalog id and
overall, on the CPU: the source rung, and the source rung plus rung-3 facts compiled ahead of time.

    PYTHONPATH=. python3 bench/triage/heldout.py [--no-ir] [--facts-cache DIR] [--out bench/results/triage-heldout.json]

The held-out set was written and labeled without reading the detectors or the labeled set they were
tuned on, so this measures how triage generalises; the scoring is `labeled.py`'s (one count per
kernel and id, at the default confidence threshold). IR facts come from the `aot` backend for
NVIDIA kernels; Ascend kernels (those importing torch_npu) get them only where the Triton-Ascend
environment is installed, and are scored on the source rung otherwise.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HELDOUT = ROOT / "tests" / "triage" / "heldout"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from labeled import evaluate, table  # noqa: E402  (bench/triage/labeled.py: the shared scoring)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-ir", action="store_true", help="score the source rung only")
    parser.add_argument("--facts-cache", type=Path, help="keep rung-3 facts per kernel in this folder (labeled.py)")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "triage-heldout.json"))
    args = parser.parse_args()
    reports = {"source": evaluate(HELDOUT, with_ir=False)}
    if not args.no_ir:
        reports["source+ir"] = evaluate(HELDOUT, with_ir=True, facts_cache=args.facts_cache)
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
