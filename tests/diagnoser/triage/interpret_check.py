"""Run a solution under Triton's interpreter against its problem's reference, on small cases.

    python tests/diagnoser/triage/interpret_check.py SOLUTION PROBLEM

Uses the problem's `get_test_cases()` (small shapes) when it has one. Every config of an
autotuned kernel is executed: the autotuner's benchmark is replaced by a single run of the
config, so a config that computes the wrong thing fails the check. Prints one line per case and
exits non-zero on any mismatch.
"""
from __future__ import annotations

import os
import sys

os.environ["TRITON_INTERPRET"] = "1"

import torch  # noqa: E402
from triton.runtime import autotuner  # noqa: E402


def _run_every_config() -> list[int]:
    runs = []

    def do_bench(self, kernel_call, quantiles):
        kernel_call()
        runs.append(1)
        return [float(len(runs))] * len(quantiles)

    autotuner.Autotuner.do_bench = do_bench
    return runs


def main(solution: str, problem_path: str) -> int:
    sys.path.insert(0, os.getcwd())
    from ladder.runner.problem import load_problem, load_solution

    runs = _run_every_config()
    problem = load_problem(problem_path)
    model_new = load_solution(solution)
    module = problem.module
    cases = module.get_test_cases() if hasattr(module, "get_test_cases") else problem.cases
    failures = 0
    for index, case in enumerate(cases):
        with problem.applied(case):
            torch.manual_seed(index)
            inputs = problem.get_inputs()
            init = problem.get_init_inputs()
        torch.manual_seed(1234)
        reference = problem.Model(*init)
        torch.manual_seed(1234)
        candidate = model_new(*init)
        with torch.no_grad():
            expected = reference(*inputs)
            got = candidate(*inputs)
        ok = got.shape == expected.shape and torch.allclose(got.float(), expected.float(), rtol=2e-3, atol=2e-3)
        error = (got.float() - expected.float()).abs().max().item() if got.shape == expected.shape else float("inf")
        print(f"case {case}: {'ok' if ok else 'MISMATCH'} (max abs error {error:.3g})")
        failures += not ok
    print(f"autotune trials: {len(runs)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
