"""Does the judge change what it times? One operator's medians per case three ways, alternating:
sandboxed contestants (what ``ladder bench`` does), in-process contestants (the judge in this
process, as rung 2 runs trusted code), and ``triton.testing.do_bench`` on the same solution.

    PYTHONPATH=. python3 bench/runner/timing_parity.py --operator kernels/level1/23_softmax --repeats 2 --out $OUT/parity.json

Sandboxed and in-process share the judge's timed call (events around the forward, L2 flushed, fresh
inputs); what differs is the processes around it, so a gap between those two columns is the cost of
the sandbox itself. do_bench times the same forward back to back on one input with its own L2
flush: an independent reading, not the same method (no fresh inputs per call). The JSON is written
after every step, so a call cut short keeps what it measured.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def judged(problem: Path, solution: Path, backend: str, isolate: bool) -> dict:
    from ladder.runner.bench import bench

    started = time.monotonic()
    record = bench(problem, {"solution": solution}, backend=backend, isolate=isolate)
    report = record["solutions"]["solution"]
    return {"ok": report["ok"], "rejected": report["rejected"], "wall_s": round(time.monotonic() - started, 1),
            "median_ms": [case["time_ms"]["median"] if case.get("time_ms") else None for case in report["cases"]],
            "reference_ms": [case["reference_ms"]["median"] if case.get("reference_ms") else None
                             for case in record["cases"]]}


def do_bench(problem_path: Path, solution: Path) -> dict:
    import torch
    from ladder.runner.inputs import make_init_inputs, make_inputs
    from ladder.runner.problem import load_problem, load_solution

    problem, model_class = load_problem(problem_path), load_solution(solution)
    device, medians = torch.device("cuda"), []
    for case in problem.cases:
        with problem.applied(case), device:
            model = model_class(*make_init_inputs(problem, case, 1, device)).to(device)
        medians.append(forward_median(model, make_inputs(problem, case, 2, device)))
        del model
        torch.cuda.empty_cache()
    return {"median_ms": medians}


def forward_median(model, inputs: list) -> float:
    import torch
    import triton.testing

    with torch.no_grad():
        return triton.testing.do_bench(lambda: model(*inputs), warmup=50, rep=300, return_mode="median")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--operator", default="kernels/level1/23_softmax")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--backend", default="cuda", help="cuda, or a CPU stand-in for a smoke run (no do_bench)")
    args = parser.parse_args(argv)
    folder = ROOT / args.operator
    problem, solution = folder / "problem.py", folder / "solution.py"
    runs: dict[str, list[dict]] = {"sandboxed": [], "in-process": [], "do_bench": []}
    steps = [("sandboxed", lambda: judged(problem, solution, args.backend, True)),
             ("in-process", lambda: judged(problem, solution, args.backend, False))]
    if args.backend == "cuda":
        steps.append(("do_bench", lambda: do_bench(problem, solution)))
    for _ in range(args.repeats):
        for name, step in steps:
            try:
                runs[name].append(step())
            except Exception as error:  # one failed way must not lose the others' numbers
                runs[name].append({"error": f"{type(error).__name__}: {error}"[:500]})
            print(f"{name}: {json.dumps(runs[name][-1])[:300]}", flush=True)
            args.out.write_text(json.dumps({"operator": args.operator, "runs": runs,
                                            "summary": summarize(runs)}, indent=1))
    for name, medians in summarize(runs).items():
        print(f"{name:11s} median of runs, per case (ms): {medians}")
    return 0


def summarize(runs: dict[str, list[dict]]) -> dict[str, list[float | None]]:
    """Per way, per case: the median over its runs of the medians it measured."""
    summary = {}
    for name, rows in runs.items():
        per_case = [row["median_ms"] for row in rows if row.get("median_ms")]
        if per_case:
            summary[name] = [round(statistics.median(v for v in values if v is not None), 4)
                             if any(v is not None for v in values) else None for values in zip(*per_case)]
    return summary


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
