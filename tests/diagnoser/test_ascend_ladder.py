"""`ladder diagnose --target ascend` on a CPU: rung 1 applies the Ascend and backend-neutral catalog
entries only, and rung 3 confirms them from Triton-Ascend's ttadapter IR at their source lines.

Needs the Triton-Ascend environment (`ladder setup ascend`); skipped without it.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from ladder.diagnoser import ladder
from ladder.diagnoser.subject import Subject
from ladder.runner.ascend_ir import ascend_python

SOFTMAX = Path(__file__).resolve().parents[2] / "kernels" / "level1" / "23_softmax"

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(ascend_python() is None, reason="needs the Triton-Ascend environment")]


@pytest.fixture(scope="module")
def climbed() -> dict:
    subject = Subject(str(SOFTMAX / "solution.py"), str(SOFTMAX / "problem.py"), backend="aot", target="ascend")
    return ladder.climb(subject, selected={1, 2, 3})


def test_the_softmax_reports_the_masked_load_fill_at_its_three_loads(climbed):
    fills = [f for f in climbed["findings"] if f["pattern"] == "npu.masked-load-fill"]
    assert sorted(f["line"] for f in fills) == [18, 24, 30]
    assert all(f["rung"] == 3 and f["confidence"] >= 0.9 for f in fills)
    facts = [e for f in fills for e in f["evidence"] if e.get("type") == "fact"]
    assert facts and all(e["kind"] == "masked_load_fill" and e["stage"] == "ttadapter" for e in facts)


def test_no_nvidia_pattern_is_applied_to_an_ascend_target(climbed):
    from ladder.diagnoser.triage.catalog import load_catalog

    catalog = load_catalog()
    assert climbed["findings"]
    assert {catalog[f["pattern"]].backend for f in climbed["findings"] if f.get("pattern")} <= {"ascend", "any"}


def test_the_grid_is_judged_against_the_ascend_cores(climbed):
    (grid,) = [f for f in climbed["findings"] if f["pattern"] == "npu.grid-exceeds-cores"]
    assert grid["line"] == 42 and "programs for 40 cores" in grid["evidence"][0]["detail"]  # the 910B3's vector cores
    ir = next(r for r in climbed["rungs"] if r["rung"] == 3)
    assert ir["status"] == "ok" and "3 findings" in ir["summary"]
