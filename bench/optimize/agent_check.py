"""Check a candidate against its problem's reference, in float64, on shapes of one's choosing.

    TRITON_INTERPRET=1 PYTHONPATH=. python3 bench/optimize/agent_check.py CANDIDATE PROBLEM '[{"M": 45, "K": 20000}]'

The problem's test cases are small; a candidate's split slices, chunk loops and edge tiles often
need larger or odder shapes to run at all. Each case sets the problem's module globals (as the
runner does) and prints the largest absolute error beside the reference's size. Under the
interpreter the runner's backend set-up gives autotuned kernels a host benchmarker.
"""
from __future__ import annotations

import importlib.util
import json
import sys

import torch

from ladder.runner.backends.interpret import InterpretBackend


def load(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check(candidate_path: str, problem_path: str, cases: list[dict]) -> None:
    candidate, problem = load(candidate_path, "candidate"), load(problem_path, "problem")
    for case in cases:
        for name, value in case.items():
            setattr(problem, name, value)
        torch.manual_seed(0)
        init = problem.get_init_inputs()
        reference, model = problem.Model(*init), candidate.ModelNew(*init)
        model.load_state_dict(reference.state_dict())
        inputs = problem.get_inputs()
        expected = reference.double()(*[x.double() if x.is_floating_point() else x for x in inputs]).double()
        error = (model(*inputs).double() - expected).abs().max().item()
        print(f"{case}: max abs error {error:.3g}, max |ref| {expected.abs().max().item():.3g}, "
              f"rms(ref) {expected.pow(2).mean().sqrt().item():.3g}")


if __name__ == "__main__":
    InterpretBackend().setup()
    check(sys.argv[1], sys.argv[2], json.loads(sys.argv[3]))
