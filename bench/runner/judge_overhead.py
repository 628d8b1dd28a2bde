"""The judge's cost: ``ladder bench`` of one suite kernel with the runner before the judge (every
solution and the reference in one process) and with it (each in a sandboxed process), interleaved.

    git archive 76ddeca runner | tar -x -C .old-runner          # the runner before the judge
    PYTHONPATH=. python3 bench/runner/judge_overhead.py --old .old-runner --repeats 3 --out OUT.json

Each run is a fresh ``bench_pair`` in a subprocess (what ``ladder bench`` does), timed on the wall
clock from outside; the two runners alternate, so the device and the caches are shared fairly.
Besides the wall time, the medians each runner measured are printed: the judge must not change them.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = """
import json, sys
sys.path.insert(0, {root!r})
from {module} import bench_pair
record = bench_pair({solution!r}, {problem!r}, backend={backend!r})
print(json.dumps({{"ok": record["ok"], "medians": [c["time_ms"]["median"] if c.get("time_ms") else None
                                                  for c in record["cases"]], "elapsed_s": record.get("elapsed_s")}}))
"""


def one(root: Path, module: str, solution: str, problem: str, backend: str, timeout_s: float) -> dict:
    """One bench_pair in a fresh process; the old runner is the bare package ``runner``, the new one ``ladder.runner``."""
    started = time.monotonic()
    program = PROGRAM.format(root=str(root), module=module, solution=solution, problem=problem, backend=backend)
    try:
        done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, cwd=str(root),
                              env={**os.environ, "PYTHONPATH": str(root)}, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        return {"error": f"no result within {timeout_s:.0f} s", "wall_s": round(time.monotonic() - started, 2)}
    wall = time.monotonic() - started
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    result = json.loads(lines[-1]) if lines else {"error": done.stderr[-500:]}
    return {**result, "wall_s": round(wall, 2)}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", type=Path, required=True, help="a folder holding the old runner/ package")
    parser.add_argument("--operator", default="kernels/level1/23_softmax")
    parser.add_argument("--backend", default="cuda")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--timeout", type=float, default=240.0, help="seconds one bench_pair may take")
    args = parser.parse_args(argv)
    solution, problem = str(ROOT / args.operator / "solution.py"), str(ROOT / args.operator / "problem.py")
    runs: dict[str, list[dict]] = {"before": [], "after": []}
    for _ in range(args.repeats):
        for name, root, module in (("before", args.old.resolve(), "runner.bench"), ("after", ROOT, "ladder.runner.bench")):
            runs[name].append(one(root, module, solution, problem, args.backend, args.timeout))
            print(f"{name}: {json.dumps(runs[name][-1])[:400]}", flush=True)
            if args.out:  # after every run: a call cut short still leaves what it measured
                args.out.write_text(json.dumps({"operator": args.operator, "runs": runs,
                                                "summary": summarize(runs)}, indent=1))
    for name, part in summarize(runs).items():
        print(f"{name}: wall {part['wall_s']} s, all correct: {part['ok']}, medians per case {part['medians_ms'][0]}",
              *(f"  error: {r['error'][-300:]}" for r in runs[name] if r.get("error")))
    return 0


def summarize(runs: dict[str, list[dict]]) -> dict[str, dict]:
    return {name: {"wall_s": sorted(r["wall_s"] for r in rows), "ok": all(r.get("ok") for r in rows),
                   "medians_ms": [r.get("medians") for r in rows]} for name, rows in runs.items() if rows}


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
