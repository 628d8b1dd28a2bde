"""Diagnose the whole kernel suite in one batched run, and finish it where the index lives.

On the GPU machine (rungs 1-3: no knowledge index there, so rung 4 records why it waits):

    PYTHONPATH=. python3 bench/ladder/diagnose_suite.py

  1. times one full `ladder diagnose` of a suite kernel on its own (cold caches), for the budget
     (`--no-solo` skips it);
  2. diagnoses all suite kernels with `ladder.diagnoser.batch.diagnose_many` (runner timing, measured
     ceilings, Nsight Compute over each kernel's deciding case in chunks, rung 3 through the JIT);
  3. writes $OUT/diagnose-suite-states.json (every climb, resumable), $OUT/diagnose-suite.json
     (one row per kernel, rung counts, timings) and $OUT/diagnose-suite.md (the table), and prints
     the table.

On the CPU machine, with the index built (`ladder index build ...`):

    python bench/ladder/diagnose_suite.py --resume OUT/diagnose-suite-states.json

  resumes every climb (`ladder diagnose --from` for each kernel: recorded rungs kept, rung 4 where
  the policy climbs it), times it, and writes bench/results/diagnose-suite*.json and .md, with three
  evidence chains.

Uses only the standard library, torch, triton and the repository on the GPU machine.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from ladder.diagnoser import batch, ladder  # noqa: E402
from ladder.diagnoser.subject import Subject  # noqa: E402

BUDGET_S = 540.0  # the whole GPU run must end within 9 minutes
SOLO_KERNEL = "level1/23_softmax"


def suite_items(only: list[str] | None = None) -> list[batch.Item]:
    from ladder.diagnoser.suite.operators import discover

    return [batch.Item(op.key, str(op.solution), str(op.problem)) for op in discover(only=tuple(only or ()))]


def ceilings() -> dict:
    """Measure and cache the device's ceilings first, so that no diagnose below pays for it."""
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "ladder.runner.roofline", "cuda"], cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=300)
    return {"seconds": round(time.monotonic() - started, 1), "ok": done.returncode == 0,
            "output": (done.stdout if done.returncode == 0 else done.stderr).strip().splitlines()[-12:]}


def solo(out: Path, rungs: str) -> dict:
    """One `ladder diagnose` of one suite kernel in a fresh process: wall time and per-rung seconds."""
    folder = REPO / "kernels" / SOLO_KERNEL
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "ladder.diagnoser", "diagnose", str(folder / "solution.py"),
                           "--rungs", rungs, "--exhaustive", "--json"], cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=300)
    wall = time.monotonic() - started
    try:
        state = json.loads(done.stdout)
    except json.JSONDecodeError:
        return {"kernel": SOLO_KERNEL, "wall_s": round(wall, 1), "error": done.stderr.strip().splitlines()[-1:]}
    (out / "diagnose-solo.json").write_text(json.dumps(state, indent=1, default=str))
    return {"kernel": SOLO_KERNEL, "wall_s": round(wall, 1),
            "rungs": {r["rung"]: {"ran": r["ran"], "seconds": r["seconds"], "why": r["why"]} for r in state["rungs"]}}


def write(where: Path, stem: str, items: list[batch.Item], states: list[dict], meta: dict) -> str:
    rows = [batch.summary_row(item.name, state) for item, state in zip(items, states)]
    where.mkdir(parents=True, exist_ok=True)
    (where / f"{stem}-states.json").write_text(json.dumps(
        {"meta": meta, "states": {item.name: state for item, state in zip(items, states)}}, default=str) + "\n")
    (where / f"{stem}.json").write_text(json.dumps({"meta": meta, "climbed": batch.climbed(rows), "rows": rows},
                                                  indent=1, default=str) + "\n")
    chains = [batch.chain(item.name, state) for item, state in zip(items, states) if state.get("citations")][:3]
    text = batch.table(rows) + "\n\n" + "\n\n".join(chains) + "\n"
    (where / f"{stem}.md").write_text("```\n" + text + "```\n")
    return text


def on_gpu(out: Path, only: list[str] | None, with_solo: bool = True) -> None:
    started = time.monotonic()
    deadline = started + BUDGET_S
    meta: dict = {"machine": os.uname().nodename, "started": time.strftime("%Y-%m-%dT%H:%M:%S")}
    print("measuring the device's ceilings ...", flush=True)
    meta["ceilings"] = ceilings()
    print(json.dumps(meta["ceilings"]), flush=True)
    if with_solo:
        print("timing one full diagnose on its own ...", flush=True)
        meta["solo"] = solo(out, "1-4")
        print(json.dumps(meta["solo"]), flush=True)
    items = suite_items(only)
    batch_started = time.monotonic()
    states = batch.diagnose_many(items, backend="cuda", deadline=deadline,
                                 progress=lambda line: print(f"[{time.monotonic() - started:5.0f} s] {line}", flush=True))
    meta["batch_s"] = round(time.monotonic() - batch_started, 1)
    meta["total_s"] = round(time.monotonic() - started, 1)
    print(write(out, "diagnose-suite", items, states, meta))
    print(f"suite diagnosed in {meta['batch_s']} s; whole run {meta['total_s']} s (budget {BUDGET_S:.0f} s)")


def resume(path: Path, results: Path) -> None:
    recorded = json.loads(path.read_text())
    solo_state = path.with_name("diagnose-solo.json")
    if solo_state.is_file():
        started = time.monotonic()
        finished = subprocess.run([sys.executable, "-m", "ladder.diagnoser", "diagnose", "--from", str(solo_state), "--json"],
                                  cwd=REPO, capture_output=True, text=True, timeout=300)
        wall = round(time.monotonic() - started, 1)
        if finished.returncode == 0:
            state = json.loads(finished.stdout)
            recorded["meta"]["solo_resumed"] = {"wall_s": wall, "rungs": {
                r["rung"]: {"ran": r["ran"], "seconds": r["seconds"]} for r in state["rungs"]}}
            print(f"solo kernel: rung 4 finished here in {wall} s (process included)", flush=True)
    items = suite_items()
    known = {item.name: item for item in items}
    meta = {**recorded["meta"], "resumed": time.strftime("%Y-%m-%dT%H:%M:%S"), "resumed_on": os.uname().nodename}
    states, names, seconds = [], [], {}
    for name, state in recorded["states"].items():
        subject = Subject(**{**state["subject"], "device": None,
                                    "solution": known[name].solution if name in known else state["subject"]["solution"],
                                    "problem": known[name].problem if name in known else state["subject"]["problem"]})
        started = time.monotonic()
        state = ladder.climb(subject, state)
        seconds[name] = round(time.monotonic() - started, 2)
        print(f"{name}: reached rung {state['reached']} ({seconds[name]} s)", flush=True)
        states.append(state)
        names.append(name)
    meta["resume_seconds"] = seconds
    print(write(results, "diagnose-suite", [known.get(n, batch.Item(n, "", None)) for n in names], states, meta))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--resume", type=Path, help="finish a GPU run's climbs here (rung 4)")
    parser.add_argument("--results", type=Path, default=REPO / "bench" / "results",
                        help="where --resume writes (default bench/results)")
    parser.add_argument("--only", action="append", help="only this suite operator (repeatable; for a smoke test)")
    parser.add_argument("--no-solo", action="store_true", help="skip step 1 (leaves its time to Nsight Compute)")
    args = parser.parse_args()
    if args.resume:
        resume(args.resume, args.results)
    else:
        on_gpu(Path(os.environ.get("OUT") or REPO / "out"), args.only, with_solo=not args.no_solo)


if __name__ == "__main__":
    main()
