"""Triage every suite kernel (kernels/level*/NN_name) and save what fired where.

    PYTHONPATH=. python3 bench/triage/suite_triage.py [--ir auto|aot|cuda|none] [--only NAME] [--out PATH]
    PYTHONPATH=. python3 bench/triage/suite_triage.py --runs bench/results/suite-agent --out FILE

Rung 1 (source + traced launches) always runs; with IR facts (rung 3) the findings are checked
against what the compiler produced: `aot` compiles for sm_90 without a device, `cuda` captures the
JIT's own compilations on a GPU, `auto` picks `cuda` when a GPU is there. Writes the summary that
`ladder explain ID` reads (bench/results/triage-suite.json, or $OUT/triage-suite.json when OUT is
set) and prints the findings per kernel and a count per pattern. With `--runs`, the kernels are the
best ones of an optimization run folder (`RUNS/level*/NAME/best.py`, each against its suite problem):
what the ladder says about the kernels the loop ended with.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def ir_backend(choice: str) -> str | None:
    if choice == "none":
        return None
    if choice == "auto":
        import torch

        return "cuda" if torch.cuda.is_available() else "aot"
    return choice


def facts(solution: Path, problem: Path, backend: str) -> tuple[list, str | None]:
    from ladder.diagnoser.ir import facts_for

    try:
        return facts_for(str(solution), str(problem), backend=backend), None
    except Exception as error:  # the source rung still runs; say why the IR is missing
        return [], f"no IR facts ({type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''})"


def run(only: str | None, backend: str | None, runs: Path | None = None) -> dict:
    from ladder.diagnoser.triage import run_triage

    solutions = sorted(runs.glob("level*/*/best.py")) if runs else sorted(ROOT.glob("kernels/level*/*/solution.py"))
    if only:
        solutions = [s for s in solutions if only in s.parent.name]
    kernels = {}
    for index, solution in enumerate(solutions, 1):
        name = f"{solution.parent.parent.name}/{solution.parent.name}"
        problem = ROOT / "kernels" / name / "problem.py"
        started = time.perf_counter()
        found_facts, note = facts(solution, problem, backend) if backend else ([], None)
        try:
            result = run_triage(str(solution), str(problem), facts=found_facts)
            entry = result.to_dict()
        except Exception as error:  # one broken kernel must not stop the suite
            entry = {"findings": [], "notes": [f"triage failed: {type(error).__name__}: {error}"]}
        if note:
            entry.setdefault("notes", []).append(note)
        entry["facts"] = len(found_facts)
        entry["seconds"] = round(time.perf_counter() - started, 2)
        kernels[name] = entry
        ids = sorted({f["pattern"] for f in entry["findings"] if f.get("pattern")})
        print(f"[{index}/{len(solutions)}] {name}: {', '.join(ids) or 'no findings'}", flush=True)
    return kernels


def device() -> str:
    try:
        import torch

        if torch.cuda.is_available():
            return torch.cuda.get_device_name(0)
    except ImportError:
        pass
    return f"CPU ({platform.processor() or platform.machine()})"


def table(kernels: dict) -> str:
    lines = [f"{'kernel':45s} {'findings':>8s}  patterns (rung: 1 source, 3 IR-confirmed)"]
    for name, entry in kernels.items():
        marks = sorted({f"{f['pattern']}{'*' if f.get('rung', 1) >= 3 else ''}" for f in entry["findings"]})
        lines.append(f"{name:45s} {len(entry['findings']):8d}  {', '.join(marks) or '-'}")
    counts = Counter(f["pattern"] for entry in kernels.values() for f in entry["findings"])
    lines.append("")
    lines.append("pattern counts: " + ", ".join(f"{p} {n}" for p, n in counts.most_common()))
    lines.append("(* = confirmed by IR facts)")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ir", default="auto", choices=["auto", "aot", "cuda", "none"],
                        help="where rung-3 facts come from (default: cuda on a GPU, else aot)")
    parser.add_argument("--only", default=None, help="only suite kernels whose folder name contains this")
    default_out = Path(os.environ["OUT"]) / "triage-suite.json" if os.environ.get("OUT") else \
        ROOT / "bench" / "results" / "triage-suite.json"
    parser.add_argument("--out", type=Path, default=default_out)
    parser.add_argument("--runs", type=Path, default=None,
                        help="triage the best kernels of this optimization run folder instead of the suite's")
    args = parser.parse_args()
    if args.runs and args.out == default_out:
        parser.error("--runs needs --out (the default is the suite's summary, which `ladder explain` reads)")
    backend = ir_backend(args.ir)
    started = time.perf_counter()
    kernels = run(args.only, backend, args.runs)
    report = {"device": device(), "ir": backend or "none", "seconds": round(time.perf_counter() - started, 1),
              "solutions": str(args.runs.resolve().relative_to(ROOT)) if args.runs else "kernels", "kernels": kernels,
              "counts": dict(Counter(f["pattern"] for e in kernels.values() for f in e["findings"]).most_common())}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    print()
    print(table(kernels))
    print(f"\n{len(kernels)} kernels in {report['seconds']} s on {report['device']} (IR: {report['ir']}); "
          f"written to {args.out}")


if __name__ == "__main__":
    main()
