"""Open an agent run per operator and submit its staged first-round candidate through ladder.

    PYTHONPATH=. python3 bench/optimize/agent_submit.py --runs .runs/suite-agent [--only level1/40_layer_norm ...]

For each operator in ``bench/optimize/agent/candidates.json``: ``ladder optimize run SOLUTION
--proposer agent --out RUNS/KEY`` (once: it writes the brief and waits), then ``ladder optimize
submit RUNS/KEY CANDIDATE --round 1 --summary ...`` (once: a run whose journal already holds round 1
is skipped), so a call cut short is continued by the next. Each reply (the verdict and the next
brief) is saved as RUNS/KEY/submit-r1.txt and printed.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STAGED = ROOT / "bench" / "optimize" / "agent"


def ladder(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ladder.diagnoser", *args], cwd=ROOT, capture_output=True, text=True, check=False)


def has_round(run: Path, number: int) -> bool:
    journal = run / "journal.jsonl"
    return journal.exists() and any(json.loads(line).get("kind") == "round" and json.loads(line).get("round") == number
                                    for line in journal.read_text().splitlines() if line.strip())


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=Path, required=True)
    parser.add_argument("--only", nargs="*", default=())
    parser.add_argument("--quick", action="store_true", help="the problems' small test cases (a CPU smoke run)")
    args = parser.parse_args(argv)
    staged = json.loads((STAGED / "candidates.json").read_text())
    status = 0
    for key, entry in staged.items():
        if args.only and key not in args.only:
            continue
        run = (args.runs / key).resolve()
        if not (run / "journal.jsonl").exists():
            opened = ladder("optimize", "run", f"kernels/{key}/solution.py", "--proposer", "agent", "--out", str(run),
                            *(["--quick"] if args.quick else []))
            if opened.returncode != 0:
                print(f"{key}: the run did not open: {(opened.stderr or opened.stdout).strip().splitlines()[-1:]}")
                status = 1
                continue
        if has_round(run, 1):
            print(f"{key}: round 1 already recorded")
            continue
        reply = ladder("optimize", "submit", str(run), str(STAGED / entry["file"]), "--round", "1",
                       "--summary", entry["summary"])
        (run / "submit-r1.txt").write_text(reply.stdout + reply.stderr)
        print(f"== {key} (exit {reply.returncode})\n{reply.stdout}{reply.stderr}", flush=True)
        status = max(status, int(reply.returncode not in (0, 1)))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
