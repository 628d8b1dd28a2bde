"""Triage with real rung-3 facts compiled ahead of time for sm_90 (no GPU needed)."""
from __future__ import annotations

import pytest

from ladder.diagnoser.triage import triage

from .triage_helpers import LABELED


def facts(name: str):
    from ladder.diagnoser.ir import facts_for

    return facts_for(str(LABELED / name / "solution.py"), str(LABELED / name / "problem.py"))


@pytest.mark.slow
def test_scalar_loads_in_the_ptx_corroborate_the_source_finding():
    findings = triage(str(LABELED / "k19" / "solution.py"), facts=facts("k19"))
    scalar = [f for f in findings if f.pattern == "nv.scalar-access"]
    assert scalar and any({e["type"] for e in f.evidence} >= {"source", "fact"} for f in scalar)
    assert all(f.rung == 3 for f in scalar if any(e["type"] == "fact" for e in f.evidence))


@pytest.mark.slow
def test_unpipelined_loop_is_seen_in_the_ttgir():
    findings = triage(str(LABELED / "k05" / "solution.py"), facts=facts("k05"))
    loop = next(f for f in findings if f.pattern == "nv.unpipelined-loop")
    assert any(e["type"] == "fact" and e["kind"] == "pipelining" for e in loop.evidence)


@pytest.mark.slow
def test_clean_gemm_stays_clean_with_its_ir():
    assert triage(str(LABELED / "c02" / "solution.py"), facts=facts("c02")) == []
