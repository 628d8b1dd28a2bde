"""The agent's staged first-round candidates (bench/optimize/agent): each names a suite operator,
passes the static rules, and is correct on its problem's test cases under the interpreter."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ladder.runner.bench import bench_pair
from ladder.runner.static_check import ERROR, check_solution

ROOT = Path(__file__).resolve().parents[3]
STAGED = ROOT / "bench" / "optimize" / "agent"
MANIFEST = json.loads((STAGED / "candidates.json").read_text())


def test_every_staged_file_is_in_the_manifest_and_names_an_operator():
    listed = {entry["file"] for entry in MANIFEST.values()}
    assert listed == {path.name for path in STAGED.glob("*.py")}
    assert all((ROOT / "kernels" / key / "problem.py").is_file() for key in MANIFEST)
    assert all(len(entry["summary"]) > 40 for entry in MANIFEST.values())


@pytest.mark.parametrize("key", sorted(MANIFEST))
def test_a_staged_candidate_passes_the_static_rules(key):
    errors = [str(v) for v in check_solution(STAGED / MANIFEST[key]["file"]) if v.severity == ERROR]
    assert errors == []


@pytest.mark.slow
@pytest.mark.parametrize("key", sorted(MANIFEST))
def test_a_staged_candidate_is_correct_on_the_test_cases(key):
    record = bench_pair(STAGED / MANIFEST[key]["file"], ROOT / "kernels" / key / "problem.py",
                        backend="interpret", seeds=1, quick=True)
    assert record["ok"], (record["rejected"], [case.get("reason") for case in record["cases"]])
