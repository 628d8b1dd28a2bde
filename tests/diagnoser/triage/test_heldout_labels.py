"""The held-out triage set (bench/sets/triage/heldout) holds clean kernels, small test cases, and every
solution is correct.

Its score is a report (bench/triage/score_set.py heldout), not a test: these tests only keep the set
usable, so a solution that no longer matches its reference fails here instead of silently skewing
the precision/recall numbers. The checks every set shares (labels match folders, known ids, backend
prefixes) are in test_label_sets.py.
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from . import label_sets
from ladder.runner.problem import load_problem

HELDOUT = label_sets.folder("heldout")
KERNELS = label_sets.kernel_folders("heldout")


@pytest.fixture(scope="module")
def labels() -> dict:
    return label_sets.labels("heldout")


@pytest.fixture(scope="module")
def interpreter_results() -> dict:
    """One interpreter process checks every kernel on its smallest test case."""
    run = subprocess.run([sys.executable, str(HELDOUT / "interpret_all.py"), "--json"],
                         capture_output=True, text=True, timeout=300)
    assert run.stdout.strip(), f"interpret_all.py printed nothing: {run.stderr[-2000:]}"
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_set_has_kernels_and_clean_ones(labels):
    assert len(KERNELS) >= 20
    assert sum(1 for name in KERNELS if labels.get(name) == []) >= 6


@pytest.mark.parametrize("name", KERNELS)
def test_problem_has_few_realistic_cases_and_small_test_cases(name):
    problem = load_problem(HELDOUT / name / "problem.py")
    assert 1 <= len(problem.cases) <= 3
    assert problem.module.get_test_cases()


@pytest.mark.parametrize("name", KERNELS)
def test_solution_matches_reference_under_interpreter(name, interpreter_results):
    result = interpreter_results[name]
    assert result["ok"], result["cases"]
