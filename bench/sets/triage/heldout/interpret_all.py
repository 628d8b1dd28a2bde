"""Check every held-out solution against its problem's reference under Triton's interpreter.

    python bench/sets/triage/heldout/interpret_all.py [--all-cases] [--json] [NAME ...]

One process for the whole set (importing torch and triton costs seconds; the interpreter must be
switched on before triton is imported, so this always runs as its own process). By default each
kernel runs on its smallest test case (``get_test_cases()``, the smallest by input elements);
``--all-cases`` runs every test case. An autotuned kernel is benchmarked by running each config
once, so every config must execute; the first config is the one whose output is compared.
Outputs are judged by ``ladder.runner.compare`` against a float64 reference where the model allows one.
Prints one line per kernel (or a JSON object with ``--json``) and exits non-zero on any failure.
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import time
from pathlib import Path

os.environ["TRITON_INTERPRET"] = "1"

import torch  # noqa: E402
from triton.runtime import autotuner  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[3]


def kernel_dirs() -> list[Path]:
    return sorted(p for p in HERE.iterdir() if (p / "problem.py").is_file() and (p / "solution.py").is_file())


def _run_each_config_once() -> None:
    calls = []

    def do_bench(self, kernel_call, quantiles):
        kernel_call()
        calls.append(1)
        return [float(len(calls))] * len(quantiles)

    autotuner.Autotuner.do_bench = do_bench


def _numel(values) -> int:
    return sum(v.numel() for v in values if isinstance(v, torch.Tensor))


def _as_double(value):
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        return value.double()
    return value


def _reference(model: torch.nn.Module, inputs: list):
    """(float64 outputs, True) when the model runs in double precision, else (None, False)."""
    try:
        with torch.no_grad():
            return copy.deepcopy(model).double()(*[_as_double(x) for x in inputs]), True
    except Exception:
        return None, False


def check_case(problem, solution_cls, case: dict) -> dict:
    from ladder.runner.compare import compare

    with problem.applied(case):
        torch.manual_seed(0)
        model = problem.Model(*problem.get_init_inputs())
        torch.manual_seed(0)
        candidate = solution_cls(*problem.get_init_inputs())
        candidate.load_state_dict(model.state_dict())
        torch.manual_seed(1)
        inputs = problem.get_inputs()
    with torch.no_grad():
        native = model(*inputs)
        expected, is_double = _reference(model, inputs)
        output = candidate(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs])
    verdict = compare(output, expected if is_double else native, native,
                      allow_tf32=bool(problem.allow_tf32), expected_is_float64=is_double)
    return {"ok": verdict.ok, "reason": verdict.reason, "max_rel_err": verdict.max_rel_err}


def checked_cases(problem, all_cases: bool) -> list[dict]:
    cases = list(getattr(problem.module, "get_test_cases", lambda: problem.cases)())
    if all_cases:
        return cases
    sizes = []
    for case in cases:
        with problem.applied(case):
            torch.manual_seed(1)
            sizes.append(_numel(problem.get_inputs()))
    return [cases[sizes.index(min(sizes))]]


def check(directory: Path, all_cases: bool) -> dict:
    from ladder.runner.problem import load_problem, load_solution

    start = time.perf_counter()
    try:
        problem = load_problem(directory / "problem.py")
        solution_cls = load_solution(directory / "solution.py")
        results = [dict(case=case, **check_case(problem, solution_cls, case))
                   for case in checked_cases(problem, all_cases)]
    except Exception as error:  # a crash is a failed check, reported on one line
        results = [{"case": None, "ok": False, "reason": f"{type(error).__name__}: {error}".splitlines()[0]}]
    return {"name": directory.name, "ok": all(r["ok"] for r in results), "cases": results,
            "seconds": round(time.perf_counter() - start, 2)}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*")
    parser.add_argument("--all-cases", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    _run_each_config_once()
    dirs = [d for d in kernel_dirs() if not args.names or d.name in args.names]
    reports = [check(d, args.all_cases) for d in dirs]
    if args.json:
        print(json.dumps({r["name"]: r for r in reports}))
    else:
        for r in reports:
            reasons = "; ".join(c["reason"] or "" for c in r["cases"] if not c["ok"])
            print(f"{'ok  ' if r['ok'] else 'FAIL'} {r['name']:24s} {r['seconds']:6.2f}s {reasons}")
    return 0 if all(r["ok"] for r in reports) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
