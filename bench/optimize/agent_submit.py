"""Open an agent run per operator and submit its staged candidates through ladder, one per round.

    PYTHONPATH=. python3 bench/optimize/agent_submit.py --runs bench/results/suite-agent \
        [--from bench/results/suite-rules] [--only level1/40_layer_norm ...]

``bench/optimize/agent/candidates.json`` lists, per operator, the agent's candidates in the order
it wrote them: the first from the brief of a CPU run, each later one from the brief the previous
submission returned. For each operator: ``ladder optimize run SOLUTION --proposer agent --out
RUNS/KEY`` (once: it writes the brief and waits), with ``--from FROM/KEY`` where the rules' run of
that operator exists (the agent then starts on the rules' best and baseline, and its candidate must
beat that best), then ``ladder optimize submit RUNS/KEY CANDIDATE --round N`` for the round the
run waits on, with the first staged candidate the journal does not hold a round of yet (the n-th
agent round plays the n-th candidate), so a call cut short is continued by the next and a
candidate is never submitted twice. Each reply (the verdict and the next brief) is saved as
RUNS/KEY/submit-rN.txt and printed. Operators go in ``--only``'s order (else the manifest's), so a
call with little device time plays the ones that matter most first.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STAGED = ROOT / "bench" / "optimize" / "agent"
sys.path.insert(0, str(ROOT))

from ladder.diagnoser.optimize import agent  # noqa: E402
from ladder.diagnoser.optimize.escalate import own_rounds  # noqa: E402
from ladder.diagnoser.optimize.journal import Journal  # noqa: E402
from ladder.diagnoser.optimize.suite import source_run  # noqa: E402


def ladder(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ladder.diagnoser", *args], cwd=ROOT, capture_output=True, text=True, check=False)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=Path, required=True)
    parser.add_argument("--only", nargs="*", default=())
    parser.add_argument("--from", dest="source", type=Path, help="the rules' runs to start from, operator by operator")
    parser.add_argument("--quick", action="store_true", help="the problems' small test cases (a CPU smoke run)")
    parser.add_argument("--deadline", type=float, help="seconds for this call: no operator is begun with less than "
                        "--reserve left (a submission cut short is gated again by the next call)")
    parser.add_argument("--reserve", type=float, default=240.0)
    args = parser.parse_args(argv)
    staged = json.loads((STAGED / "candidates.json").read_text())
    status, began = 0, time.monotonic()
    for key in args.only or list(staged):
        entries = staged.get(key)
        if entries is None:
            print(f"{key}: no candidate is staged for it")
            status = 1
            continue
        if args.deadline is not None and time.monotonic() - began > args.deadline - args.reserve:
            print(f"{key}: not begun ({args.deadline - (time.monotonic() - began):.0f} s left)")
            continue
        run = (args.runs / key).resolve()
        if not (run / "journal.jsonl").exists():
            source = source_run(args.source, key)
            start = ["--from", str(source)] if source is not None else []
            opened = ladder("optimize", "run", f"kernels/{key}/solution.py", "--proposer", "agent", "--out", str(run),
                            *start, *(["--quick"] if args.quick else []))
            if opened.returncode != 0:
                print(f"{key}: the run did not open: {(opened.stderr or opened.stdout).strip().splitlines()[-1:]}")
                status = 1
                continue
        played = [r["round"] for r in own_rounds(Journal(run))]  # the agent's, after any rules' rounds copied
        if len(played) >= len(entries):
            print(f"{key}: all {len(entries)} staged candidates were submitted (rounds {', '.join(map(str, played))})")
            continue
        staged_next = entries[len(played)]
        now = agent.status(run)
        if now["state"] != "waiting":
            print(f"{key}: the run is {now['state']} ({now.get('reason')}); nothing submitted")
            continue
        number = str(now["waiting_for"])
        reply = ladder("optimize", "submit", str(run), str(STAGED / staged_next["file"]), "--round", number,
                       "--summary", staged_next["summary"])
        (run / f"submit-r{number}.txt").write_text(reply.stdout + reply.stderr)
        print(f"== {key} round {number} (exit {reply.returncode})\n{reply.stdout}{reply.stderr}", flush=True)
        status = max(status, int(reply.returncode not in (0, 1)))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
