"""Time a run's best against its initial version both ways on one card: as its last gate did and as a
re-check does, alternated, so that a journal figure a re-check on another unit did not reproduce can
be put down either to the unit or to the shape of the run.

    PYTHONPATH=. python3 bench/optimize/gate_vs_bench.py bench/results/suite-rules/level2/63_gemm_relu_divide \
        --out bench/results/suite-rules-recheck/gate-vs-bench.json [--repeat 2] [--deadline 400]

The gate shape is the run's last timed round played again (``run_gate``: the best of that time
twice, the initial version, and that round's candidates from ``RUN/candidates/``, one judge run, the
gate settings the journal recorded); the journal's figure for the best came from that round, as the
accepted candidate's verdict or as the best's own refreshed figures. The re-check shape is
``recheck.py``'s (``ladder bench best.py --baseline initial.py``, two contestants, the bench's
settings: a timing budget of 1.0 s per contestant and case and 30-300 repetitions, against the
gate's 0.4 s and 20-200). Both are timed ``--repeat`` times in turn (gate, re-check, gate, ...), so
a drift of the card over the minutes reads as a drift in both. Each run's per-case times of the best
and the initial version are kept beside the speedup: the re-checks so far found the initial version,
not the best, timed differently. The record is written after each run (a call cut short keeps what
it measured; the next call adds to it).
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import recheck  # noqa: E402

from ladder.diagnoser.optimize.gate import GateSettings, geomean, run_gate  # noqa: E402
from ladder.diagnoser.optimize.journal import Journal  # noqa: E402


def last_gate_round(folder: Path) -> dict:
    """The run's last timed round, its candidates' files and the best it was judged against."""
    journal = Journal(folder)
    rounds = [r for r in journal.rounds() if r.get("device")]
    if not rounds:
        raise SystemExit(f"gate_vs_bench: {folder} has no timed round")
    last = rounds[-1]
    number = last["round"]
    files = {path.stem: path for path in sorted((folder / "candidates").glob(f"r{number}-c*.py"))}
    accepted_before = [r for r in rounds if r["round"] < number and r.get("accepted")]
    best_then = (folder / "candidates" / f"{accepted_before[-1]['accepted']}.py" if accepted_before
                 else folder / "initial.py")
    header = journal.header()
    return {"round": number, "accepted": last.get("accepted"), "candidates": files, "best_then": best_then,
            "problem": Path(header["problem"]), "gate": GateSettings(**header.get("settings", {}).get("gate", {}))}


def gate_shaped(folder: Path, shape: dict, problem: Path) -> dict:
    """The last round's gate again; the figure the journal keeps for the best comes from it."""
    result = run_gate(problem, shape["best_then"], folder / "initial.py", shape["candidates"], shape["gate"])
    accepted = shape["accepted"]
    rows = result.verdicts[accepted].cases if accepted else result.best_cases
    return {"shape": "gate", "round": shape["round"], "device": result.device, "device_uuid": result.device_uuid,
            "contestants": sorted(result.record.get("solutions", {})),
            "accepted_again": result.verdicts[accepted].accepted if accepted else None,
            **_figures(rows)}


def recheck_shaped(folder: Path, runs: Path) -> dict:
    row = recheck.recheck(folder, runs, None, 3)
    return {"shape": "re-check", "device": row.get("device"), "correct": row.get("correct"),
            "speedup": row.get("speedup"), "cases": row.get("cases"), "clocks": row.get("clocks"),
            "autotune": row.get("autotune")}


def _figures(rows: list[dict]) -> dict:
    """The gate's case rows as best and initial times: a row's speedup over the initial version is the
    initial version's time in that run over the row's, so the initial's time is their product."""
    cases = [{"label": row.get("label"), "best_ms": row.get("time_ms"),
              "initial_ms": row["time_ms"] * row["speedup_vs_initial"] if row.get("speedup_vs_initial") else None,
              "speedup_vs_initial": row.get("speedup_vs_initial")} for row in rows]
    return {"speedup": geomean([case["speedup_vs_initial"] for case in cases]), "cases": cases}


def _speedup(value: float | None) -> str:
    return f"{value:.3f}x" if value else "not timed"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--deadline", type=float, default=math.inf, help="seconds: no run is started after")
    args = parser.parse_args(argv)
    started = time.monotonic()
    folder = args.run.resolve()
    shape = last_gate_round(folder)
    problem = shape["problem"]
    if not problem.is_file():  # a run made in another checkout: the suite operator of the same name here
        problem = ROOT / "kernels" / Path(*folder.parts[-2:]) / "problem.py"
    record = json.loads(args.out.read_text()) if args.out.is_file() else {"run": str(args.run), "runs": []}
    for turn in range(args.repeat):
        for name in ("gate", "re-check"):
            if time.monotonic() - started > args.deadline:
                print(f"{name} {turn + 1}: not started (deadline)", flush=True)
                continue
            began = time.monotonic()
            run = gate_shaped(folder, shape, problem) if name == "gate" else recheck_shaped(folder, folder.parents[1])
            record["runs"].append({**run, "seconds": round(time.monotonic() - began, 1)})
            args.out.write_text(json.dumps(record, indent=1, default=str))
            print(f"{name} {turn + 1}: " + "  ".join(_speedup(value) for value in [run["speedup"]] + [
                case.get("speedup_vs_initial") for case in run["cases"] or []]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
