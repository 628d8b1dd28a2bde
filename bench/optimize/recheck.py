"""Re-check every accepted best of a suite run with a separate `ladder bench`, on fresh seeds.

    PYTHONPATH=. python3 bench/optimize/recheck.py --runs .runs/suite-rules-2 --out bench/results/suite-rules-recheck.json [--deadline 540]

For each operator run under ``--runs`` whose journal holds an accepted best (a round > 0), this
runs ``ladder bench RUN/best.py --problem P --baseline RUN/initial.py --json`` in a process of its
own (a new judge, new seeds drawn by it, the baseline timed interleaved), then compares: every case
must be correct, and the geomean speedup over the initial version must agree with the journal's
within the journal's spread (``CASE_SPREAD_FLOOR`` at least: two separate runs differ by more than
one run's best-against-itself). The record per operator is written to ``--out`` as soon as it is
known, so a call cut short is continued by the next (operators already there are skipped); the
table goes to stdout.
"""
from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from ladder.diagnoser.optimize.gate import CASE_SPREAD_FLOOR, geomean  # noqa: E402
from ladder.diagnoser.optimize.journal import Journal  # noqa: E402

PER_OPERATOR_S = 600.0


def accepted_runs(runs: Path) -> list[Path]:
    """Run folders whose journal's best came from a round (the initial version needs no re-check);
    runs set aside under ``superseded/`` were run again and are not the suite's result."""
    found = []
    for journal in sorted(runs.rglob("journal.jsonl")):
        folder = journal.parent
        if "superseded" in folder.relative_to(runs).parts:
            continue
        if (Journal(folder).best() or {}).get("round", 0) > 0:
            found.append(folder)
    return found


def recheck(folder: Path, runs: Path, backend: str | None, seeds: int) -> dict:
    journal = Journal(folder)
    header, best = journal.header(), journal.best()
    problem = Path(header["problem"])
    if not problem.is_file():  # a run made in another checkout: the suite operator of the same name here
        problem = ROOT / "kernels" / folder.relative_to(runs) / "problem.py"
    command = [sys.executable, "-m", "ladder.diagnoser", "bench", str(folder / "best.py"), "--problem", str(problem),
               "--baseline", str(folder / "initial.py"), "--json", "--seeds", str(seeds)]
    if backend:
        command += ["--backend", backend]
    began = time.monotonic()
    try:
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=PER_OPERATOR_S)
    except subprocess.TimeoutExpired:
        done = subprocess.CompletedProcess(command, None, "", f"no answer within {PER_OPERATOR_S:g} s")
    row = {"run": str(folder), "problem": str(problem), "journal_speedup": best.get("geomean_vs_initial"),
           "journal_spread": _journal_spread(journal, best), "seconds": round(time.monotonic() - began, 1)}
    try:
        record = json.loads(done.stdout)
    except json.JSONDecodeError:
        return {**row, "correct": False, "why": (done.stderr.strip().splitlines() or ["no output"])[-1]}
    wrong = [c for c in record["cases"] if not c.get("correct")]
    speedups = [c.get("speedup_vs_baseline") for c in record["cases"]]
    row.update(correct=record["ok"] and not wrong, base_seed=record.get("base_seed"), device=record.get("device"),
               timed=record.get("timed", False), cases=[{"label": c.get("label"), "correct": c.get("correct"),
                                                          "speedup_vs_initial": s} for c, s in zip(record["cases"], speedups)])
    if wrong or not record["ok"]:
        reason = (record.get("rejected") or {}).get("reason") or (wrong[0].get("reason") if wrong else None)
        row["why"] = reason or "not correct"
    if row["timed"] and all(speedups):
        row["speedup"] = geomean(speedups)
        tolerance = max(row["journal_spread"] or 0.0, CASE_SPREAD_FLOOR)
        row["ratio"] = row["speedup"] / row["journal_speedup"]
        row["tolerance"] = tolerance
        row["within_spread"] = abs(row["ratio"] - 1.0) <= tolerance
    return row


def _journal_spread(journal: Journal, best: dict) -> float | None:
    """The spread of the gate that accepted the best (the best against itself in that run)."""
    return next((r.get("spread") for r in journal.rounds() if r["round"] == best.get("round", 0)), None)


def table(rows: list[dict]) -> str:
    lines = ["| operator | correct | journal | re-check | ratio | within spread |", "|---|---|---|---|---|---|"]
    for row in rows:
        name = "/".join(Path(row["run"]).parts[-2:])
        speed = f"{row['speedup']:.3f}x" if row.get("speedup") else "not timed"
        ratio = f"{row['ratio']:.3f} (tolerance {row['tolerance']:.1%})" if row.get("ratio") else "-"
        lines.append(f"| {name} | {'yes' if row['correct'] else 'NO: ' + str(row.get('why'))} | "
                     f"{row['journal_speedup']:.3f}x | {speed} | {ratio} | "
                     f"{'yes' if row.get('within_spread') else 'no' if row.get('ratio') else '-'} |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--backend", default=None, help="cuda on the GPU machine (the default there)")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--deadline", type=float, default=math.inf, help="seconds: no operator is started after")
    args = parser.parse_args(argv)
    started = time.monotonic()
    rows = json.loads(args.out.read_text())["operators"] if args.out.is_file() else []
    done = {row["run"] for row in rows}
    for folder in accepted_runs(args.runs):
        if str(folder) in done:
            continue
        if time.monotonic() - started > args.deadline:
            print(f"{folder}: not started (deadline)", flush=True)
            continue
        rows.append(recheck(folder, args.runs, args.backend, args.seeds))
        args.out.write_text(json.dumps({"runs": str(args.runs), "operators": rows}, indent=1, default=str))
        print(json.dumps(rows[-1], default=str), flush=True)
    print(table(rows))
    return 0 if all(row["correct"] and row.get("within_spread", True) for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
