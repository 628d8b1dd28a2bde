"""Precision and recall of triage on the labeled kernels (bench/sets/triage/labeled), per catalog id and
overall, on the CPU: the source rung always, plus rung-3 facts compiled ahead of time with `--ir`.

    PYTHONPATH=. python3 bench/triage/labeled.py [--ir] [--facts-cache DIR] [--out bench/results/triage-labeled.json]

A kernel counts once per id: an id is a true positive when triage reports it for that kernel (at
the default confidence threshold) and the labels list it, a false positive when the labels do not,
a false negative when the labels list it and triage does not.

Compiling every kernel ahead of time is most of an `--ir` run. `--facts-cache DIR` keeps each
kernel's rung-3 facts in DIR, keyed by the solution and problem text, the installed triton and the
rung-3 sources (`diagnoser/ir`, `runner`), so re-scoring after a triage change recompiles nothing
while anything that could change the facts still does.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LABELED = ROOT / "bench" / "sets" / "triage" / "labeled"


def load_labels(folder: Path = LABELED) -> dict[str, set[str]]:
    import yaml

    return {name: set(ids or []) for name, ids in yaml.safe_load((folder / "labels.yaml").read_text()).items()}


def evaluate(folder: Path = LABELED, with_ir: bool = False, facts_cache: Path | None = None) -> dict:
    from ladder.diagnoser.triage import run_triage

    labels = load_labels(folder)
    per_kernel = {}
    counts: dict[str, dict[str, int]] = defaultdict(lambda: {"tp": 0, "fp": 0, "fn": 0})
    for name, expected in sorted(labels.items()):
        solution, problem = folder / name / "solution.py", folder / name / "problem.py"
        facts = _cached_facts(solution, problem, facts_cache) if with_ir else None
        started = time.perf_counter()
        result = run_triage(str(solution), str(problem), facts=facts)
        found = {f.pattern for f in result.findings if f.pattern}
        for pattern in found & expected:
            counts[pattern]["tp"] += 1
        for pattern in found - expected:
            counts[pattern]["fp"] += 1
        for pattern in expected - found:
            counts[pattern]["fn"] += 1
        per_kernel[name] = {"expected": sorted(expected), "found": sorted(found),
                            "missed": sorted(expected - found), "extra": sorted(found - expected),
                            "seconds": round(time.perf_counter() - started, 2), "notes": result.notes}
    per_id = {pattern: {**c, **_scores(c)} for pattern, c in sorted(counts.items())}
    total = {k: sum(c[k] for c in counts.values()) for k in ("tp", "fp", "fn")}
    return {"with_ir": with_ir, "kernels": len(labels), "overall": {**total, **_scores(total)},
            "per_id": per_id, "per_kernel": per_kernel}


def _scores(c: dict[str, int]) -> dict[str, float | None]:
    precision = c["tp"] / (c["tp"] + c["fp"]) if c["tp"] + c["fp"] else None
    recall = c["tp"] / (c["tp"] + c["fn"]) if c["tp"] + c["fn"] else None
    return {"precision": None if precision is None else round(precision, 3),
            "recall": None if recall is None else round(recall, 3)}


def _cached_facts(solution: Path, problem: Path, cache: Path | None) -> list:
    if cache is None:
        return _facts(solution, problem)
    from ladder.diagnoser.evidence import Fact

    entry = Path(cache) / f"{solution.parent.name}-{_facts_key(solution, problem)}.json"
    if entry.is_file():
        return [Fact.from_dict(item) for item in json.loads(entry.read_text())]
    facts = _facts(solution, problem)
    entry.parent.mkdir(parents=True, exist_ok=True)
    entry.write_text(json.dumps([f.to_dict() for f in facts]))
    return facts


def _facts_key(solution: Path, problem: Path) -> str:
    """What the facts depend on: the two files, the triton version and the rung-3 code."""
    import triton

    digest = hashlib.sha256(solution.read_bytes() + problem.read_bytes() + triton.__version__.encode())
    for folder in (ROOT / "diagnoser" / "ir", ROOT / "runner"):
        for path in sorted(folder.rglob("*.py")):
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _facts(solution: Path, problem: Path) -> list:
    """Rung-3 facts through the aot backend (no device), or none when capture fails."""
    try:
        from ladder.diagnoser.ir import facts_for

        target = "ascend" if "torch_npu" in solution.read_text() else "sm90"
        return facts_for(str(solution), str(problem), target=target)
    except Exception as error:  # the source rung is still measured
        print(f"  {solution.parent.name}: no IR facts ({type(error).__name__}: {error})", file=sys.stderr)
        return []


def table(report: dict) -> str:
    lines = [f"{'pattern':30s} {'tp':>3s} {'fp':>3s} {'fn':>3s} {'precision':>9s} {'recall':>7s}"]
    for pattern, row in report["per_id"].items():
        lines.append(f"{pattern:30s} {row['tp']:3d} {row['fp']:3d} {row['fn']:3d} "
                     f"{_fmt(row['precision']):>9s} {_fmt(row['recall']):>7s}")
    o = report["overall"]
    lines.append(f"{'overall':30s} {o['tp']:3d} {o['fp']:3d} {o['fn']:3d} {_fmt(o['precision']):>9s} {_fmt(o['recall']):>7s}")
    return "\n".join(lines)


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ir", action="store_true", help="add rung-3 facts compiled ahead of time")
    parser.add_argument("--facts-cache", type=Path, help="keep rung-3 facts per kernel in this folder")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "triage-labeled.json"))
    args = parser.parse_args()
    reports = {"source": evaluate(with_ir=False)}
    if args.ir:
        reports["source+ir"] = evaluate(with_ir=True, facts_cache=args.facts_cache)
    show_and_save(reports, Path(args.out))


def show_and_save(reports: dict[str, dict], out: Path) -> None:
    """Print each rung's errors per kernel and its table; keep all of it as JSON in `out`."""
    for label, report in reports.items():
        print(f"== {label} ({report['kernels']} kernels)")
        for name, row in report["per_kernel"].items():
            if row["missed"] or row["extra"]:
                print(f"{name}: missed {row['missed']} extra {row['extra']}")
        print(table(report))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(reports, indent=1) + "\n")


if __name__ == "__main__":
    main()
