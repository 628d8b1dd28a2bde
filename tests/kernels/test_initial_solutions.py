"""Every initial solution is correct on its problem's small test cases under Triton's interpreter,
judged by the runner's gate (float64 reference, poisoned outputs, launch and torch-op guards).

The whole suite runs once, in a fresh process: the interpreter must be switched on before Triton's
own standard library is imported, which the rest of a test session may already have done.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ladder.diagnoser.suite.operators import discover

REPO = Path(__file__).resolve().parents[2]
OPERATORS = discover()


@pytest.fixture(scope="module")
def rows() -> dict[str, dict]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "TRITON_INTERPRET": "1"}
    process = subprocess.run(
        [sys.executable, "-m", "ladder.diagnoser", "suite", "--backend", "interpret", "--quick", "--seeds", "2",
         "--seed", "1234", "--json"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    assert process.returncode in (0, 1), process.stderr[-2000:]
    return {row["operator"]: row for row in json.loads(process.stdout)["operators"]}


@pytest.mark.parametrize("op", OPERATORS, ids=lambda op: op.key)
def test_initial_solution_is_correct_under_the_interpreter(op, rows):
    row = rows[op.key]
    failures = [f"{case['label']}: {case.get('reason')}" for case in row["cases"] if not case["correct"]]
    assert not row.get("error") and not row.get("rejected"), row.get("error") or row.get("rejected")
    assert not failures
    assert row["ok"] and len(row["cases"]) >= 2
    assert all(case["launches"] >= 1 for case in row["cases"])
