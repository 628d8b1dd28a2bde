"""Precision and recall of triage on one of the evaluation sets under bench/sets/triage, per catalog id
and overall, on the CPU: the source rung, and the source rung plus rung-3 facts compiled ahead of time.

    PYTHONPATH=. python3 bench/triage/score_set.py SET [--no-ir] [--facts-cache DIR] [--out FILE]

SET is a folder name under bench/sets/triage (`heldout`, `blind2`, `blind3`); the report goes to
bench/results/triage-SET.json unless `--out` says otherwise. Each of those sets was written and
labeled without reading the detectors or the sets they were tuned on, and committed before it was
first scored; a set stops measuring generalisation once detectors are changed after looking at its
errors (heldout and blind2 have been; the commit history says when). The scoring is `labeled.py`'s
(one count per kernel and id, at the default confidence threshold). IR facts come from the `aot`
backend for NVIDIA kernels and from Triton-Ascend's ttadapter for Ascend kernels (those importing
torch_npu) where that environment is installed; without it they are scored on the source rung.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from labeled import evaluate, show_and_save  # noqa: E402  (bench/triage/labeled.py: the shared scoring)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("set", help="folder under bench/sets/triage holding labels.yaml and one folder per kernel")
    parser.add_argument("--no-ir", action="store_true", help="score the source rung only")
    parser.add_argument("--facts-cache", type=Path, help="keep rung-3 facts per kernel in this folder (labeled.py)")
    parser.add_argument("--out", type=Path, help="where the report goes (default bench/results/triage-SET.json)")
    args = parser.parse_args()
    folder = ROOT / "bench" / "sets" / "triage" / args.set
    if not (folder / "labels.yaml").is_file():
        parser.error(f"{folder} holds no labels.yaml")
    reports = {"source": evaluate(folder, with_ir=False)}
    if not args.no_ir:
        reports["source+ir"] = evaluate(folder, with_ir=True, facts_cache=args.facts_cache)
    show_and_save(reports, args.out or ROOT / "bench" / "results" / f"triage-{args.set}.json")


if __name__ == "__main__":
    main()
