"""Precision and recall of the whole ladder's rungs 1-3 on the labeled evaluation sets, on a device or
on the CPU, so the two can be read side by side: rung 2 on a device must only add evidence, never
cost precision (a kernel wrongly classed launch-bound stops the climb before rung 3's facts).

    PYTHONPATH=. python3 bench/triage/labeled_ladder.py [--sets labeled,heldout,blind2,blind3]
        [--backend auto|cuda|aot] [--out DIR] [--deadline SECONDS] [--chunk N] [--no-ncu]

Each kernel climbs exactly as under `ladder diagnose --rungs 1-3` (through `ladder.diagnoser.batch`, the
scheduling of `ladder suite --diagnose`), and is scored like `labeled.py`: once per kernel and
catalog id, on the ids of the climb's final findings. On the CPU (`aot`: no device) rung 2 is
skipped and rungs 1 and 3 always run; on the H200 (`cuda`) rung 2 times every case and may stop the
climb when the findings explain the gap.

Resumable: each set's climbs go to DIR/ladder-SET-BACKEND.json as chunks of kernels finish; a rerun
continues where the last stopped, and `--deadline` ends cleanly before a device call's limit. When
both backends' files are in DIR, DIR/ladder-device-vs-cpu.md holds the side-by-side table.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from labeled import _scores, load_labels  # bench/triage/labeled.py: the shared scoring

SETS = ("labeled", "heldout", "blind2", "blind3")
RUNGS = {1, 2, 3}


def chosen_backend(requested: str) -> str:
    if requested != "auto":
        return requested
    import torch

    return "cuda" if torch.cuda.is_available() else "aot"


# Seconds one kernel's climb took, the longest seen in this run or recorded by an earlier one: a
# chunk holds only as many kernels as still end before the deadline. (Timing the last chunk alone
# let a short chunk of 5 kernels open a chunk of 12 that ran past an H200 call's limit, and lost it.)
PER_KERNEL = {"seconds": 30.0}
MARGIN = 1.25


def fitting(pending: int, chunk: int, deadline: float) -> int:
    """How many kernels the next chunk may hold (0: none fits before the deadline)."""
    room = (deadline - time.monotonic()) / (PER_KERNEL["seconds"] * MARGIN)
    return max(0, min(pending, chunk, int(room)))


def progress_path(out: Path, name: str, backend: str) -> Path:
    return out / f"ladder-{name}-{backend}.json"


def climb_set(name: str, backend: str, out: Path, deadline: float, chunk: int, use_ncu: bool) -> dict:
    """Climb every kernel of one set not climbed yet, saving after each chunk; the set's record."""
    from ladder.diagnoser import batch

    folder = ROOT / "bench" / "sets" / "triage" / name
    labels = load_labels(folder)
    path = progress_path(out, name, backend)
    record = json.loads(path.read_text()) if path.is_file() else {"set": name, "backend": backend, "kernels": {}}
    pending = [kernel for kernel in sorted(labels) if kernel not in record["kernels"]]
    PER_KERNEL["seconds"] = max([PER_KERNEL["seconds"]] + [row.get("seconds_each", 0) for row in record["kernels"].values()])
    while size := fitting(len(pending), chunk, deadline):
        part, pending = pending[:size], pending[size:]
        items = [batch.Item(k, str(folder / k / "solution.py"), str(folder / k / "problem.py")) for k in part]
        started = time.monotonic()
        states = batch.diagnose_many(items, selected=RUNGS, backend=backend, use_ncu=use_ncu,
                                     deadline=deadline, progress=lambda line: print(f"  {name}: {line}", flush=True))
        seconds = (time.monotonic() - started) / len(part)
        PER_KERNEL["seconds"] = max(PER_KERNEL["seconds"], seconds)
        for kernel, state in zip(part, states):
            record["kernels"][kernel] = summarise(state, labels[kernel], seconds)
        path.write_text(json.dumps(record, indent=1) + "\n")
    record["complete"] = not pending and len(record["kernels"]) == len(labels)
    record["overall"] = score(record["kernels"].values())
    path.write_text(json.dumps(record, indent=1) + "\n")
    return record


def summarise(state: dict, expected: set[str], seconds: float) -> dict:
    """What scoring and reading need from one climb: ids found, rungs climbed and why each stopped."""
    found = {f["pattern"] for f in state["findings"] if f.get("pattern")}
    return {"expected": sorted(expected), "found": sorted(found), "missed": sorted(expected - found),
            "extra": sorted(found - expected), "reached": state.get("reached"),
            "gap": {"explained": state["gap"]["explained"], "why": state["gap"]["why"][:200],
                    "classes": sorted({str(c.get("class")) for c in state["gap"].get("cases", [])})},
            "rungs": [{"rung": r["rung"], "status": r["status"], "why": r["why"][:160],
                       **({"error": str(r["error"])[:300]} if r.get("error") else {})} for r in state["rungs"]],
            "warnings": state.get("warnings", [])[:5], "seconds_each": round(seconds, 2)}


def score(rows) -> dict:
    total = {"tp": 0, "fp": 0, "fn": 0}
    for row in rows:
        total["tp"] += len(set(row["found"]) & set(row["expected"]))
        total["fp"] += len(row["extra"])
        total["fn"] += len(row["missed"])
    return {**total, **_scores(total)}


def side_by_side(out: Path) -> str | None:
    """The device-vs-CPU table, when both backends' records are in `out`."""
    lines = ["| set | kernels | CPU (rungs 1, 3) P / R | H200 (rungs 1-3) P / R | stopped before rung 3 on the H200 "
             "| rung 2 failed on the H200 |",
             "|---|---|---|---|---|---|"]
    rows = 0
    for name in SETS:
        cpu, gpu = progress_path(out, name, "aot"), progress_path(out, name, "cuda")
        if not (cpu.is_file() and gpu.is_file()):
            continue
        a, b = json.loads(cpu.read_text()), json.loads(gpu.read_text())
        stopped = sum(1 for row in b["kernels"].values()
                      if not any(r["rung"] == 3 and r["status"] != "skipped" for r in row["rungs"]))
        failed = sum(1 for row in b["kernels"].values()
                     if any(r["rung"] == 2 and r["status"] == "failed" for r in row["rungs"]))
        lines.append(f"| {name} | {len(a['kernels'])} / {len(b['kernels'])} | {_pr(a['overall'])} | "
                     f"{_pr(b['overall'])} | {stopped} | {failed} |")
        rows += 1
    return "\n".join(lines) + "\n" if rows else None


def _pr(overall: dict) -> str:
    return " / ".join("-" if overall[k] is None else f"{overall[k]:.2f}" for k in ("precision", "recall"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--backend", default="auto", choices=["auto", "cuda", "aot"])
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT") or ROOT / "bench" / "results"))
    parser.add_argument("--deadline", type=float, default=540.0, help="seconds from now to stop starting chunks")
    parser.add_argument("--chunk", type=int, default=12, help="kernels per batched climb between saves")
    parser.add_argument("--no-ncu", action="store_true", help="rung 2 without Nsight Compute counters")
    args = parser.parse_args()
    backend = chosen_backend(args.backend)
    deadline = time.monotonic() + args.deadline
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.sets.split(","):
        record = climb_set(name, backend, args.out, deadline, args.chunk, not args.no_ncu)
        o = record["overall"]
        print(f"{name} [{backend}] {len(record['kernels'])} kernels{'' if record['complete'] else ' (incomplete)'}: "
              f"tp {o['tp']} fp {o['fp']} fn {o['fn']} precision {o['precision']} recall {o['recall']}", flush=True)
    table = side_by_side(args.out)
    if table:
        (args.out / "ladder-device-vs-cpu.md").write_text(table)
        print(table)


if __name__ == "__main__":
    main()
