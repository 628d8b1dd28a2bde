"""The held-out triage set (tests/triage/heldout) is well formed and every solution is correct.

Its score is a report (bench/triage/score_set.py heldout), not a test: these tests only keep the set usable,
so a folder without a label, an id the catalog does not know, or a solution that no longer matches
its reference fails here instead of silently skewing the precision/recall numbers.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from diagnoser.triage.catalog import load_catalog
from runner.problem import load_problem

HELDOUT = Path(__file__).resolve().parent / "heldout"
KERNELS = sorted(p.name for p in HELDOUT.iterdir() if (p / "problem.py").is_file() and (p / "solution.py").is_file())


@pytest.fixture(scope="module")
def labels() -> dict:
    return yaml.safe_load((HELDOUT / "labels.yaml").read_text())


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


def test_every_kernel_folder_has_a_label_entry(labels):
    assert [name for name in KERNELS if name not in labels] == []


def test_every_label_entry_names_a_kernel_folder(labels):
    assert sorted(set(labels) - set(KERNELS)) == []


def test_labels_are_lists_of_distinct_catalog_ids(labels):
    known = set(load_catalog())
    for name, ids in labels.items():
        assert isinstance(ids, list), name
        assert len(ids) == len(set(ids)), name
        assert set(ids) <= known, f"{name}: unknown ids {sorted(set(ids) - known)}"


def test_ascend_ids_label_only_ascend_solutions(labels):
    for name, ids in labels.items():
        ascend = "torch_npu" in (HELDOUT / name / "solution.py").read_text()
        prefixes = {pattern.split(".")[0] for pattern in ids}
        assert prefixes <= ({"npu"} if ascend else {"nv"}), name


@pytest.mark.parametrize("name", KERNELS)
def test_problem_has_few_realistic_cases_and_small_test_cases(name):
    problem = load_problem(HELDOUT / name / "problem.py")
    assert 1 <= len(problem.cases) <= 3
    assert problem.module.get_test_cases()


@pytest.mark.parametrize("name", KERNELS)
def test_solution_matches_reference_under_interpreter(name, interpreter_results):
    result = interpreter_results[name]
    assert result["ok"], result["cases"]
