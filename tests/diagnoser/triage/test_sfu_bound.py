"""nv.sfu-bound-loop: a dot loop whose special-function calls (attention's exponentials) take a
quarter or more of its matmuls' time at the tensor-core ceiling, on the target's table."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from ladder.diagnoser.triage import run_triage
from ladder.runner import hardware

from .triage_helpers import ROOT

ATTENTION = ROOT / "kernels" / "level1" / "97_sdpa"     # online softmax, 64x64 tiles, tl.exp per score
GEMM_SWISH = ROOT / "kernels" / "level2" / "59_matmul_swish_scaling"   # sigmoid on the accumulator


def sfu_findings(solution: Path, problem: Path):
    return [f for f in run_triage(str(solution), str(problem), detectors=["sfu_bound"]).findings]


def ratios(finding) -> dict[str, float]:
    return {e["cases"][0]: e["value"] for e in finding.evidence if e["type"] == "metric"}


def expected_ratio(head_dim: int) -> float:
    """exp per score against 2 x 2 x head_dim flops per score (Q @ K^T and P @ V), at the table's rates."""
    table = hardware.for_target("cuda")
    sfu_rate = table["sfu_ops_per_clock_per_sm"] * table["sm_clock_hz"] * table["sm_count"]
    return (1 / sfu_rate) / (4 * head_dim / table["ceiling_flops"]["fp16"])


def test_attention_s_exponentials_are_weighed_against_its_two_dots_per_case():
    [finding] = sfu_findings(ATTENTION / "solution.py", ATTENTION / "problem.py")
    source = finding.evidence[0]
    assert finding.confidence == 0.7 and "tl.exp(" in source["text"]
    assert len(source["cases"]) == 5
    by_case = ratios(finding)
    for case, ratio in by_case.items():
        head_dim = int(re.search(r"head_dim=(\d+)", case).group(1))
        # the row rescale's exp on BLOCK_M values adds 1/BLOCK_N = 1/64 to the per-score count
        assert ratio == pytest.approx(expected_ratio(head_dim) * (1 + 1 / 64), abs=0.01)
    assert sorted(set(by_case.values())) == [0.37, 0.75]
    assert "reaches at most 57% of the roofline" in source["detail"]


def test_a_head_dim_whose_matmuls_dwarf_the_exponentials_is_left_alone(tmp_path):
    problem = (ATTENTION / "problem.py").read_text()
    cases = re.search(r"def get_cases\(\):\n    return \[\n(.*?)\n    \]", problem, re.S)
    wide = '        {"batch_size": 2, "num_heads": 4, "sequence_length": 1024, "head_dim": 256},'
    (tmp_path / "problem.py").write_text(problem.replace(cases.group(1), wide))
    assert expected_ratio(256) < 0.25
    assert sfu_findings(ATTENTION / "solution.py", tmp_path / "problem.py") == []


def test_an_epilogue_activation_after_the_k_loop_is_not_counted():
    """A fused GEMM's Swish runs once per output after its K loop, never beside the loop's dots."""
    assert "tl.sigmoid(" in (GEMM_SWISH / "solution.py").read_text()
    assert sfu_findings(GEMM_SWISH / "solution.py", GEMM_SWISH / "problem.py") == []
