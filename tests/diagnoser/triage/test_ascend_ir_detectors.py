"""Every npu.* pattern Triton-Ascend's IR shows is found at rung 3 on a kernel written to show it,
at the line that shows it, and not at all on the same kernel fixed.

Compiles through Triton-Ascend's ttir and ttadapter stages (no NPU): needs its environment
(LADDER_ASCEND_PYTHON or .venv-ascend, `ladder setup ascend`); skipped without it.
"""
from __future__ import annotations

import pytest

from ladder.diagnoser.triage import triage
from ladder.runner.ascend_ir import ascend_python

from .triage_helpers import ASCEND, ASCEND_PATTERNS, ascend_capture, shown_line

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(ascend_python() is None, reason="needs the Triton-Ascend environment")]


def findings(name: str, variant: str) -> list:
    solution, problem = str(ASCEND / name / variant), str(ASCEND / name / "problem.py")
    _, facts = ascend_capture(solution, problem)
    return triage(solution, problem, facts=list(facts), target="ascend")


@pytest.mark.parametrize("name", sorted(ASCEND_PATTERNS))
def test_the_pattern_is_found_at_rung_3_on_the_line_that_shows_it(name):
    pattern = ASCEND_PATTERNS[name]
    found = [f for f in findings(name, "solution.py") if f.pattern == pattern and f.rung == 3]
    assert found, f"{pattern} not found at rung 3"
    assert shown_line(ASCEND / name / "solution.py") in {f.line for f in found}
    assert all(any(e.get("type") == "fact" for e in f.evidence) for f in found)


@pytest.mark.parametrize("name", sorted(ASCEND_PATTERNS))
def test_the_fixed_twin_shows_no_such_pattern_at_any_rung(name):
    pattern = ASCEND_PATTERNS[name]
    assert [f.line for f in findings(name, "fixed.py") if f.pattern == pattern] == []


def test_every_ir_detected_ascend_pattern_has_a_pair():
    from ladder.diagnoser.triage.detectors import DETECTORS

    seen_in_ir = {p for d in DETECTORS.values() if d.level == "ir" for p in d.patterns if p.startswith("npu.")}
    assert seen_in_ir == set(ASCEND_PATTERNS.values())
