"""`ladder.diagnoser.triage.triage`: inputs it accepts, how it merges rungs, what it refuses."""
from __future__ import annotations


import pytest

from ladder.diagnoser.evidence import Fact
from ladder.diagnoser.triage import SourceError, run_triage, triage
from ladder.diagnoser.triage.detectors import DETECTORS, detectors_for

from .triage_helpers import LABELED, fixture


def test_problem_beside_the_solution_is_used():
    result = run_triage(str(LABELED / "k01" / "solution.py"))
    assert result.cases == 3 and "nv.tiny-block" in {f.pattern for f in result.findings}


def test_without_a_problem_only_shape_independent_checks_run(tmp_path):
    solution = tmp_path / "solution.py"
    solution.write_text((LABELED / "k12" / "solution.py").read_text())
    result = run_triage(str(solution))
    assert result.cases == 0 and any("no problem file" in note for note in result.notes)
    assert "nv.atomic-contention" in {f.pattern for f in result.findings}


def test_source_text_is_accepted_with_a_problem():
    text = (LABELED / "k10" / "solution.py").read_text()
    findings = triage(text, LABELED / "k10" / "problem.py")
    assert "nv.loop-carried-reduction" in {f.pattern for f in findings}


def test_findings_carry_source_evidence_a_fix_and_a_confidence():
    finding = next(f for f in triage(*fixture("elementwise")) if f.pattern == "nv.tiny-block")
    assert finding.evidence[0]["type"] == "source" and finding.evidence[0]["line"] == finding.line
    assert finding.evidence[0]["text"].startswith("x = tl.load")
    assert finding.fix and 0.5 <= finding.confidence <= 1


def test_findings_are_sorted_best_first():
    confidences = [f.confidence for f in triage(*fixture("gemm_small_tile"))]
    assert confidences == sorted(confidences, reverse=True)


def test_an_ir_fact_on_the_same_line_corroborates_the_source_finding():
    solution, problem = fixture("gemm_small_tile")
    alone = next(f for f in triage(solution, problem) if f.pattern == "nv.mma-v2-on-hopper")
    fact = Fact(kernel="matmul_kernel", kind="dot_lowering", value={"kind": "mma_sync", "mma_version": 2},
                file=solution, line=alone.line, stage="ttgir")
    merged = [f for f in triage(solution, problem, facts=[fact]) if f.pattern == "nv.mma-v2-on-hopper"]
    assert len(merged) == 1 and merged[0].rung == 3 and merged[0].confidence > alone.confidence
    assert {e["type"] for e in merged[0].evidence} == {"source", "fact"}


def test_min_confidence_filters():
    solution, problem = fixture("gemm_small_tile")
    assert triage(solution, problem, min_confidence=0.99) == []


def test_ascend_solutions_get_ascend_detectors():
    result = run_triage(str(LABELED / "a01" / "solution.py"))
    assert result.target == "ascend"
    assert {f.pattern for f in result.findings} <= {n for d in detectors_for("ascend").values() for n in d.patterns}


def test_target_can_be_forced():
    assert run_triage(str(LABELED / "k01" / "solution.py"), target="ascend").target == "ascend"


def test_unknown_target_is_a_one_line_error():
    with pytest.raises(SourceError, match="unknown target"):
        run_triage(str(LABELED / "k01" / "solution.py"), target="tpu")


def test_missing_solution_is_a_one_line_error():
    with pytest.raises(SourceError, match="no such solution file"):
        triage("does/not/exist.py")


def test_syntax_error_names_the_line(tmp_path):
    bad = tmp_path / "solution.py"
    bad.write_text("import triton\n\ndef broken(:\n")
    with pytest.raises(SourceError, match=":3: syntax error"):
        triage(str(bad))


def test_a_forward_that_fails_everywhere_degrades_to_source_checks(tmp_path):
    text = (LABELED / "k12" / "solution.py").read_text().replace("n = x.numel()", "n = x.numel() // (x.dim() - 1)")
    (tmp_path / "solution.py").write_text(text)
    (tmp_path / "problem.py").write_text((LABELED / "k12" / "problem.py").read_text())
    result = run_triage(str(tmp_path / "solution.py"))
    assert result.cases == 0
    assert all("not traced" in note and "on the CPU" in note for note in result.notes)
    assert "nv.atomic-contention" in {f.pattern for f in result.findings}


def test_detectors_are_listed_with_level_backend_and_patterns():
    assert list(DETECTORS)[0] == "access_width"
    for name, detector in DETECTORS.items():
        assert detector.level in ("source", "ir", "profile") and detector.patterns and detector.doc, name


def test_unknown_detector_name_is_refused():
    with pytest.raises(ValueError, match="unknown detector"):
        run_triage(str(LABELED / "k01" / "solution.py"), detectors=["nope"])


def test_autotuned_kernel_is_judged_on_its_whole_config_space(tmp_path):
    text = (LABELED / "c01" / "solution.py").read_text().replace(
        'triton.Config({"BLOCK": 1024}, num_warps=4),', 'triton.Config({"BLOCK": 128}, num_warps=4),')
    (tmp_path / "solution.py").write_text(text)
    (tmp_path / "problem.py").write_text((LABELED / "c01" / "problem.py").read_text())
    assert "nv.tiny-block" not in {f.pattern for f in triage(str(tmp_path / "solution.py"))}
    only_small = text.replace('triton.Config({"BLOCK": 2048}, num_warps=8),', '').replace(
        'triton.Config({"BLOCK": 4096}, num_warps=8),', '')
    (tmp_path / "solution.py").write_text(only_small)
    assert "nv.tiny-block" in {f.pattern for f in triage(str(tmp_path / "solution.py"))}
