"""The rules proposer on suite kernels: its rewrites stay correct under Triton's interpreter."""
from __future__ import annotations

from pathlib import Path

import pytest

from ladder.diagnoser.optimize.brief import brief_for
from ladder.diagnoser.optimize.proposers.rules import RulesProposer, source_hash
from ladder.diagnoser.triage import triage
from ladder.runner.bench import bench

KERNELS = Path(__file__).resolve().parents[3] / "kernels"
OPERATORS = ["level1/02_matmul", "level1/09_tall_skinny_matmul", "level2/12_gemm_multiply_leaky_relu",
             "level1/04_matvec", "level1/23_softmax"]


def brief(folder: Path, tmp_path: Path, level: str = "full"):
    findings = [f.to_dict() for f in triage(str(folder / "solution.py"), str(folder / "problem.py"))]
    timing = [{"case": 0, "label": "c0", "time_ms": 1.0, "roofline_pct": 30.0}]
    made = brief_for(1, str(folder / "problem.py"), str(folder / "solution.py"), level, {"findings": findings}, timing, [])
    return made


@pytest.mark.slow
@pytest.mark.parametrize("operator", OPERATORS)
def test_every_rewrite_the_rules_propose_is_correct_under_the_interpreter(operator, tmp_path):
    folder = KERNELS / operator
    proposals = RulesProposer().propose(brief(folder, tmp_path), 8)
    assert proposals, "the rules found nothing to propose for a GEMM far from its roofline"
    files = {}
    for index, proposal in enumerate(proposals):
        path = tmp_path / f"c{index}.py"
        path.write_text(proposal.source)
        files[f"c{index}"] = path
    result = bench(folder / "problem.py", files, "interpret", quick=True, seeds=1, timeout=900)
    for name, report in result["solutions"].items():
        assert report["ok"], (name, report["rejected"], [c.get("reason") for c in report["cases"]])


def test_nothing_is_proposed_twice(tmp_path):
    folder = KERNELS / OPERATORS[0]
    first = brief(folder, tmp_path)
    proposals = RulesProposer().propose(first, 8)
    tried = {"round": 1, "proposals": [{"source_hash": source_hash(p.source)}
                                        for p in proposals]}
    again = brief(folder, tmp_path)
    again.history = [tried]
    assert RulesProposer().propose(again, 8) == []


def test_a_candidate_the_gate_could_not_judge_is_proposed_again(tmp_path):
    folder = KERNELS / "level1/23_softmax"
    proposals = RulesProposer().propose(brief(folder, tmp_path), 8)
    unjudged = {"round": 1, "proposals": [{"source_hash": source_hash(p.source), "judged": False}
                                          for p in proposals]}
    again = brief(folder, tmp_path)
    again.history = [unjudged]
    assert [p.source for p in RulesProposer().propose(again, 8)] == [p.source for p in proposals]


def test_without_evidence_every_fix_is_tried_blind(tmp_path):
    folder = KERNELS / OPERATORS[0]
    blind = RulesProposer().propose(brief(folder, tmp_path, level="none"), 8)
    assert blind and all("tried without evidence" in p.summary for p in blind)


def test_a_running_reduction_the_diagnosis_found_is_taken_out_of_the_loop(tmp_path):
    proposals = RulesProposer().propose(brief(KERNELS / "level1/04_matvec", tmp_path), 8)
    hoisted = next(p for p in proposals if p.patterns == ["nv.loop-carried-reduction"])
    assert "acc = tl.sum(acc, axis=1)" in hoisted.source


def test_a_softmax_read_twice_for_its_max_and_sum_gets_the_online_pass(tmp_path):
    proposals = RulesProposer().propose(brief(KERNELS / "level1/23_softmax", tmp_path), 8)
    online = next(p for p in proposals if p.patterns == ["nv.redundant-global-traffic"])
    assert "denom = denom * tl.exp(row_max - m)" in online.source
