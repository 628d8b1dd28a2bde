"""nv.short-k-loop: a GEMM program's fill and epilogue against its K loop, on the target's table."""
from __future__ import annotations

from pathlib import Path

import pytest

from ladder.diagnoser.triage import run_triage
from ladder.diagnoser.triage.context import TriageContext
from ladder.diagnoser.triage.detectors.source.short_k import compute_bound, k_loop_share
from ladder.diagnoser.triage.detectors.source.tile_fit import Gemm, Tile
from ladder.diagnoser.triage.source import parse_module
from ladder.runner import hardware

from .triage_helpers import FIXTURES

GEMM_128X256 = FIXTURES / "tile_misfit" / "fixed.py"   # one 128x256x64 tile per program, 8 warps, 3 stages
TABLE = hardware.for_target("cuda")


def problem(tmp_path: Path, m: int, n: int, k: int) -> Path:
    text = (FIXTURES / "tile_misfit" / "problem.py").read_text()
    text = text.replace("M = 6144\nN = 6144\nK = 6144", f"M = {m}\nN = {n}\nK = {k}")
    path = tmp_path / f"problem_{m}_{n}_{k}.py"
    path.write_text(text)
    return path


def short_k(solution: Path, problem_path: Path):
    return run_triage(str(solution), str(problem_path), detectors=["short_k"]).findings


def expected_share(steps: int, block_m: int = 128, block_n: int = 256, block_k: int = 64) -> float:
    """K steps at one SM's share of the sustained rate against the fill plus the fp16 tile's write."""
    sms = TABLE["sm_count"]
    step = 2 * block_m * block_n * block_k / (TABLE["sustained_flops"] / sms)
    fixed = TABLE["tile_fill_seconds"] + block_m * block_n * 2 * sms / TABLE["ceiling_bandwidth"]
    return steps * step / (steps * step + fixed)


def test_a_k_of_1024_leaves_a_128x256_tile_under_85_percent_in_its_loop(tmp_path):
    [finding] = short_k(GEMM_128X256, problem(tmp_path, 8192, 8192, 1024))
    source, metric = finding.evidence
    assert finding.pattern == "nv.short-k-loop" and finding.confidence == 0.7
    assert "16 K steps" in source["detail"] and "65,536 bytes" in source["detail"]
    assert metric["value"] == round(expected_share(16), 2) < 0.85


def test_a_long_k_loop_amortises_the_fixed_cost(tmp_path):
    assert expected_share(128) > 0.85
    assert short_k(GEMM_128X256, problem(tmp_path, 8192, 8192, 8192)) == []


def test_a_memory_bound_gemm_is_left_to_its_traffic(tmp_path):
    """At K = 64 the output's write is the GEMM's floor, not an overhead beside its flops."""
    peak = TABLE["ceiling_flops"]["fp16"]
    assert not compute_bound(Gemm(8192, 8192, 64, 16, 16, 16, peak, True))
    assert short_k(GEMM_128X256, problem(tmp_path, 8192, 8192, 64)) == []


def test_a_gemm_too_small_to_lose_2_us_is_left_alone(tmp_path):
    """64 tiles of 8 K steps: 28% of each program is fixed cost, 1.2 us of the launch."""
    assert expected_share(8) < 0.85
    assert short_k(GEMM_128X256, problem(tmp_path, 1024, 2048, 512)) == []


def test_two_programs_per_sm_share_the_fixed_cost():
    ctx = TriageContext(source=parse_module("import triton\n"), device=dict(TABLE))
    gemm = Gemm(8192, 8192, 1024, 16, 16, 16, TABLE["ceiling_flops"]["fp16"], True)
    tile = Tile(128, 128, 64, 8, 3)
    one, fixed = k_loop_share(ctx, tile, gemm, 16, resident=1)
    two, same = k_loop_share(ctx, tile, gemm, 16, resident=2)
    assert same == fixed and two > one
    assert one == pytest.approx(expected_share(16, 128, 128))
