"""`ladder suite --optimize --ray local` on several GPUs against one: the wall-time ratio, and whether
the accepted results agree.

    export PYTHONPATH=$PWD:/tmp/site   # Ray from bench/optimize/ray_wheels.py where the machine has none
    python3 bench/optimize/scale_ratio.py --runs RUNS --out RESULT.json --rounds 1 \\
        --only 19_relu 24_log_softmax 47_sum_dim 51_argmax_dim [--gpus 2] [--one-gpu-only | --many-only]

Each configuration is one whole `ladder suite --optimize` process over the same operators, from
their initial versions, into a run folder of its own (RUNS/gpus-N): first on ``--gpus`` GPUs, then
with CUDA_VISIBLE_DEVICES narrowed to the first one, so the only difference is how many GPUs Ray
can lease. A configuration whose result is already in RESULT.json is not run again (a device call
can take one configuration; the next call takes the other). The ratio is the one-GPU wall time over
the several-GPU one; agreement is each operator's initial -> best speedup in both runs, side by side
(they are timed on different GPUs and at different times, so they agree within timing noise or
not at all: a different accepted candidate shows as a different pattern list).
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


def run_suite(gpus: int, args: argparse.Namespace) -> dict:
    env = dict(os.environ, CUDA_VISIBLE_DEVICES=",".join(str(i) for i in range(gpus)))
    folder = args.runs / f"gpus-{gpus}"
    command = [sys.executable, "-m", "ladder", "suite", "--optimize", "--ray", "local", "--rounds", str(args.rounds),
               "--out", str(folder), "--json", *[arg for name in args.only for arg in ("--only", name)]]
    began = time.monotonic()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.monotonic() - began
    (args.runs / f"gpus-{gpus}.stderr.txt").write_text(done.stderr)
    try:
        document = json.loads(done.stdout)
    except json.JSONDecodeError:
        return {"gpus": gpus, "wall_s": round(wall, 1), "exit": done.returncode,
                "error": (done.stderr.strip().splitlines() or ["no output"])[-1]}
    return {"gpus": gpus, "wall_s": round(wall, 1), "exit": done.returncode,
            "operators": {row["operator"]: {key: row.get(key) for key in
                                            ("speedup_vs_initial", "best_round", "patterns", "rounds", "stopped")}
                          for row in document.get("operators", [])},
            "summary": document.get("summary")}


def compare(many: dict, one: dict) -> dict:
    rows = {}
    for name in sorted(set(many.get("operators", {})) | set(one.get("operators", {}))):
        a, b = many.get("operators", {}).get(name, {}), one.get("operators", {}).get(name, {})
        rows[name] = {"several GPUs": a.get("speedup_vs_initial"), "one GPU": b.get("speedup_vs_initial"),
                      "same patterns": a.get("patterns") == b.get("patterns")}
    return {"wall_ratio": round(one["wall_s"] / many["wall_s"], 3) if many.get("wall_s") else None, "operators": rows}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--only", nargs="+", required=True)
    parser.add_argument("--gpus", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=1)
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--many-only", action="store_true", help="run only the several-GPU configuration")
    which.add_argument("--one-gpu-only", action="store_true", help="run only the one-GPU configuration")
    args = parser.parse_args(argv)
    args.runs.mkdir(parents=True, exist_ok=True)
    result = json.loads(args.out.read_text()) if args.out.exists() else {}
    plan = [(f"gpus-{args.gpus}", args.gpus, not args.one_gpu_only), ("gpus-1", 1, not args.many_only)]
    for key, gpus, wanted in plan:
        if wanted and key not in result:
            result[key] = run_suite(gpus, args)
            args.out.write_text(json.dumps(result, indent=1))
            print(json.dumps(result[key]), flush=True)
    if f"gpus-{args.gpus}" in result and "gpus-1" in result:
        result["comparison"] = compare(result[f"gpus-{args.gpus}"], result["gpus-1"])
        args.out.write_text(json.dumps(result, indent=1))
        print(json.dumps(result["comparison"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
