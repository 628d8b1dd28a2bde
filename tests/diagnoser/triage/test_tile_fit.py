"""nv.tile-misfit: a GEMM tile measured against the one shape it runs (operand feed from L2,
waves over the SMs, L2 reuse against HBM), on the target's hardware table."""
from __future__ import annotations

from pathlib import Path

import pytest

from ladder.diagnoser.triage import run_triage
from ladder.diagnoser.triage.context import TriageContext
from ladder.diagnoser.triage.detectors.source.tile_fit import Gemm, Tile, best_fit, fit, misfit, tail_loss
from ladder.diagnoser.triage.source import parse_module
from ladder.runner import hardware

from .triage_helpers import FIXTURES

MISFIT = FIXTURES / "tile_misfit"  # 64x64x32 fp16 tiles, 4 warps, on one 6144-cube


def triaged(name: str, facts=None, problem=MISFIT / "problem.py"):
    return run_triage(str(MISFIT / f"{name}.py"), str(problem), facts=facts)


def ctx(**overrides) -> TriageContext:
    return TriageContext(source=parse_module("import triton\n"), device={**hardware.for_target("cuda"), **overrides})


def gemm(m: int, n: int, k: int, bits: int = 16, grouped: bool = True) -> Gemm:
    peak = hardware.for_target("cuda")["ceiling_flops"]["fp16" if bits == 16 else "tf32"]
    return Gemm(m, n, k, bits, bits, bits, peak, grouped)


def test_small_fixed_tiles_on_one_large_shape_are_a_misfit():
    [finding] = [f for f in triaged("solution").findings if f.pattern == "nv.tile-misfit"]
    detail = finding.evidence[0]["detail"]
    assert "64x64x32" in detail and "6144x6144x6144" in detail and "128x256x64" in detail
    assert finding.line == 28 and finding.evidence[0]["cases"] == ["default"]  # the problem's one case


def test_a_tile_that_fits_the_shape_is_not():
    assert [f.pattern for f in triaged("fixed").findings] == []


def test_a_script_s_gemm_is_judged_on_the_shape_it_really_launches():
    """No problem file and the sizes in variables: the script's own launch gives the shape."""
    script = FIXTURES / "tile_misfit_script" / "train.py"
    assert run_triage(str(script)).findings == []
    [finding] = run_triage(str(script), script=True).findings
    assert finding.pattern == "nv.tile-misfit" and finding.line == 30
    assert "6144x6144x6144" in finding.evidence[0]["detail"]


def test_the_model_reads_the_device_table():
    tile, shape = Tile(64, 64, 32, 4, 3), gemm(6144, 6144, 6144)
    table = hardware.for_target("cuda")
    current = fit(ctx(), tile, shape)
    assert current.ridge == pytest.approx(table["ceiling_flops"]["fp16"] / table["l2_bandwidth"])
    assert current.intensity == 32 and current.feed == pytest.approx(32 / current.ridge)
    assert misfit(ctx(), tile, shape) is not None
    assert misfit(ctx(l2_bandwidth=4 * table["l2_bandwidth"]), tile, shape) is None  # a faster L2 feeds it


def test_too_few_tiles_for_the_sms_count_against_a_tile():
    few = fit(ctx(), Tile(128, 256, 64, 8, 3), gemm(1024, 2048, 8192))   # 64 tiles on 132 SMs
    assert few.balance == pytest.approx(64 / 132, abs=0.01) and few.feed == 1.0


def test_an_operand_re_read_by_every_wave_counts_against_hbm():
    wide = gemm(8192, 16384, 2048, grouped=False)   # B (64 MiB) outgrows half the L2: every wave streams it again
    small, large = fit(ctx(), Tile(64, 64, 64, 4, 4), wide), fit(ctx(), Tile(128, 256, 64, 8, 3), wide)
    assert small.hbm < 0.6 and large.hbm == 1.0   # 396 resident 64x64 tiles per wave re-read B 83 times
    assert fit(ctx(), Tile(64, 64, 64, 4, 4), gemm(8192, 16384, 2048, grouped=True)).hbm == 1.0  # grouped: B stays in L2


def test_small_gemms_and_good_enough_tiles_are_left_alone():
    assert misfit(ctx(), Tile(64, 64, 32, 4, 3), gemm(256, 256, 256)) is None       # 34 MFLOP
    assert misfit(ctx(), Tile(128, 64, 64, 4, 4), gemm(6144, 6144, 6144)) is None   # about half the peak
    assert best_fit(ctx(), gemm(6144, 6144, 6144)).tile == Tile(128, 256, 64, 8, 3)


def test_tf32_operands_need_wider_tiles():
    assert misfit(ctx(), Tile(128, 64, 32, 4, 3), gemm(6144, 6144, 6144, bits=32)) is not None
    assert misfit(ctx(), Tile(128, 64, 64, 4, 3), gemm(6144, 6144, 6144)) is None


def test_a_tile_lowered_to_mma_sync_is_left_to_the_mma_v2_rule(tmp_path):
    from .triage_helpers import write_pair

    text = (MISFIT / "solution.py").read_text().replace("BLOCK_M=64,", "BLOCK_M=32,").replace(
        "triton.cdiv(M, 64)", "triton.cdiv(M, 32)")
    solution, problem = write_pair(tmp_path / "mma", text, str(MISFIT / "problem.py"))
    found = {f.pattern for f in run_triage(solution, problem).findings}
    assert "nv.mma-v2-on-hopper" in found and "nv.tile-misfit" not in found


def test_a_fixed_config_over_several_shapes_is_left_to_the_hardcoded_config_rule(tmp_path):
    from .triage_helpers import write_pair

    problem = (MISFIT / "problem.py").read_text() + (
        '\n\ndef get_cases():\n    return [{"M": 6144, "N": 6144, "K": 6144}, {"M": 2048, "N": 6144, "K": 1024}]\n')
    folder = tmp_path / "cases"
    folder.mkdir()
    (folder / "problem.py").write_text(problem)
    solution, problem = write_pair(tmp_path / "pair", (MISFIT / "solution.py").read_text(), str(folder / "problem.py"))
    found = {f.pattern for f in run_triage(solution, problem).findings}
    assert "nv.hardcoded-config" in found and "nv.tile-misfit" not in found


def test_a_shape_every_good_tile_leaves_a_partial_last_wave_on_is_a_tail():
    """3000-cube: 128x256 tiles feed the tensor cores fully but make 288 tiles, 2.18 per SM (the
    busiest SMs run 3); the tiles that fill the waves feed them less. Comparing tiles alone finds
    nothing; the tail split along K is what the shape lacks."""
    big, cube = Tile(128, 256, 64, 8, 3), gemm(3000, 3000, 3000)
    assert misfit(ctx(), big, cube) is None
    tail = tail_loss(ctx(), [big], cube)
    assert tail is not None and tail.current.tile == big and tail.split.tile == big
    assert tail.current.balance == pytest.approx(288 / 132 / 3, abs=0.01) and tail.split_reach == 1.0
    assert tail.best.reach < 0.8 * tail.split_reach


def test_shapes_whose_waves_come_out_even_or_too_few_have_no_tail():
    big = Tile(128, 256, 64, 8, 3)
    assert tail_loss(ctx(), [big], gemm(4096, 4096, 4096)) is None     # 512 tiles, 3.88 per SM
    assert tail_loss(ctx(), [big], gemm(1024, 2048, 8192)) is None     # 64 tiles: nv.small-grid's
    assert tail_loss(ctx(), [big], gemm(1000, 1000, 1000)) is None     # 2 GFLOP: its tail costs under 2 us


def _cube_of(tmp_path, size: int, tile: tuple[int, int]) -> tuple[str, str]:
    from .triage_helpers import write_pair

    block_m, block_n = tile
    text = (MISFIT / "solution.py").read_text().replace("triton.cdiv(M, 64) * triton.cdiv(N, 64)", (
        f"triton.cdiv(M, {block_m}) * triton.cdiv(N, {block_n})")).replace(
        "BLOCK_M=64, BLOCK_N=64, BLOCK_K=32", f"BLOCK_M={block_m}, BLOCK_N={block_n}, BLOCK_K=64").replace(
        "num_warps=4", "num_warps=8")
    solution, problem = write_pair(tmp_path / f"cube{size}", text, str(MISFIT / "problem.py"))
    Path(problem).write_text(Path(problem).read_text().replace("= 6144", f"= {size}"))
    return solution, problem


def test_the_finding_on_a_tail_names_the_wave_and_the_time_a_split_saves(tmp_path):
    found = run_triage(*_cube_of(tmp_path, 3000, (128, 256))).findings
    [finding] = [f for f in found if f.pattern == "nv.tile-misfit"]
    detail = finding.evidence[0]["detail"]
    assert "3000x3000x3008" in detail and "288 tiles are 2.18 per SM" in detail and "busiest SMs run 3" in detail
    assert "along K" in detail and "27% off the GEMM's time" in detail
    assert not [f for f in run_triage(*_cube_of(tmp_path, 4096, (128, 256))).findings if f.pattern == "nv.tile-misfit"]


def test_attention_s_chain_of_dots_is_not_judged_as_one_gemm():
    """QK^T then PV in one loop: the standard GEMM tiles (256x128) are no advice for attention."""
    from .triage_helpers import ROOT

    folder = ROOT / "kernels" / "level1" / "97_sdpa"
    found = run_triage(str(folder / "solution.py"), str(folder / "problem.py")).findings
    assert "nv.tile-misfit" not in {f.pattern for f in found}


@pytest.mark.slow
def test_the_compiled_kernel_confirms_the_misfit_and_keeps_the_wgmma_excerpt():
    from ladder.diagnoser.ir import facts_for

    facts = facts_for(str(MISFIT / "solution.py"), str(MISFIT / "problem.py"))
    result = triaged("solution", facts=facts)
    [finding] = [f for f in result.findings if f.pattern == "nv.tile-misfit"]
    assert finding.rung == 3 and finding.confidence > 0.8
    [compiled] = [e for e in finding.evidence if e["type"] == "fact"]
    assert compiled["kind"] == "dot_lowering" and "warp_group_dot" in compiled["excerpt"]
    assert "resident per SM" in compiled["detail"]
    assert [f.pattern for f in triaged("fixed", facts=facts_for(str(MISFIT / "fixed.py"), str(MISFIT / "problem.py"))).findings] == []
