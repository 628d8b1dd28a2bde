"""Every initial solution is correct on its problem's small test cases under Triton's interpreter,
judged by the runner's gate (float64 reference, poisoned outputs, launch and torch-op guards)."""
from __future__ import annotations

import pytest

from diagnoser.suite import BenchSettings, discover, evaluate, quick_problems

OPERATORS = discover()
# The interpreter indexes with 1-element arrays, which numpy 1.25+ deprecates (harmless here).
pytestmark = pytest.mark.filterwarnings("ignore:Conversion of an array with ndim:DeprecationWarning")


@pytest.fixture
def interpreter(monkeypatch):
    """The in-process evaluation sets TRITON_INTERPRET for the solutions it imports; undo it after."""
    monkeypatch.setenv("TRITON_INTERPRET", "1")


@pytest.mark.parametrize("op", OPERATORS, ids=lambda op: op.key)
def test_initial_solution_is_correct_under_the_interpreter(op, interpreter):
    settings = BenchSettings(backend="interpret", time=False, seeds=2, seed=1234)
    with quick_problems([op]) as small:
        record = evaluate(small[op.key], op.solution, settings)
    failures = [f"{case['label']}: {case.get('reason')}" for case in record["cases"] if not case["correct"]]
    assert record["rejected"] is None, record["rejected"]
    assert not failures
    assert record["ok"] and len(record["cases"]) >= 2
    assert all(case["launches"] >= 1 for case in record["cases"])
