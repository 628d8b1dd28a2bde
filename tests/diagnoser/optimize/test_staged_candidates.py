"""The agent's staged candidates (bench/optimize/agent): each names a suite operator, passes the
static rules, and is correct on its problem's test cases under the interpreter."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ladder.runner.bench import bench_pair
from ladder.runner.static_check import ERROR, check_solution

ROOT = Path(__file__).resolve().parents[3]
STAGED = ROOT / "bench" / "optimize" / "agent"
MANIFEST = json.loads((STAGED / "candidates.json").read_text())
STAGED_FILES = sorted((key, entry["file"]) for key, entries in MANIFEST.items() for entry in entries)


def test_every_staged_file_is_in_the_manifest_once_and_names_an_operator():
    listed = [file for _, file in STAGED_FILES]
    assert sorted(listed) == sorted(path.name for path in STAGED.glob("*.py")) and len(set(listed)) == len(listed)
    assert all((ROOT / "kernels" / key / "problem.py").is_file() for key in MANIFEST)
    assert all(len(entry["summary"]) > 40 for entries in MANIFEST.values() for entry in entries)


@pytest.mark.parametrize("key,file", STAGED_FILES)
def test_a_staged_candidate_passes_the_static_rules(key, file):
    errors = [str(v) for v in check_solution(STAGED / file) if v.severity == ERROR]
    assert errors == []


@pytest.mark.slow
@pytest.mark.parametrize("key,file", STAGED_FILES)
def test_a_staged_candidate_is_correct_on_the_test_cases(key, file):
    record = bench_pair(STAGED / file, ROOT / "kernels" / key / "problem.py",
                        backend="interpret", seeds=1, quick=True)
    assert record["ok"], (record["rejected"], [case.get("reason") for case in record["cases"]])
