"""Every mechanical fix: it removes the pattern it targets, changes nothing else in the file, and
the rewritten kernel still matches the reference under Triton's interpreter (every autotune
config included)."""
from __future__ import annotations

import difflib
import re
from pathlib import Path

import pytest

from ladder.diagnoser.triage import triage
from ladder.diagnoser.triage.fixes import FIXES, NotApplicable, apply_fix

from .triage_helpers import FIXTURES, LABELED, ROOT, fixture, interpret, write_pair

CASES = [
    ("elementwise", "nv.tiny-block"),
    ("gemm_rowmajor", "nv.hardcoded-config"),
    ("gemm_small_tile", "nv.mma-v2-on-hopper"),
    ("gemm_small_tile", "nv.unpipelined-loop"),
    ("gemm_rowmajor", "nv.gemm-no-grouped-order"),
    ("gemm_divmod", "nv.gemm-no-grouped-order"),
    ("rows_unaligned", "nv.scalar-access"),
    ("where_offsets", "nv.scalar-access"),
]


@pytest.fixture
def pair(tmp_path):
    def make(solution_text: str, problem: str) -> tuple[str, str]:
        return write_pair(tmp_path / "k", solution_text, problem)
    return make


def patterns(solution: str, problem: str) -> set[str]:
    return {f.pattern for f in triage(solution, problem)}


def test_every_required_fix_is_listed():
    assert {"nv.hardcoded-config", "nv.tiny-block", "nv.mma-v2-on-hopper", "nv.unpipelined-loop",
            "nv.gemm-no-grouped-order", "nv.scalar-access"} <= set(FIXES)


@pytest.mark.parametrize("name,pattern", CASES)
def test_fixture_shows_the_pattern_before_the_fix(name, pattern):
    assert pattern in patterns(*fixture(name))


@pytest.mark.parametrize("name,pattern", CASES)
def test_fix_removes_the_pattern(name, pattern):
    solution, problem = fixture(name)
    fixed = apply_fix(pattern, solution, problem)
    assert pattern not in patterns(fixed, problem)


@pytest.mark.parametrize("name,pattern", CASES)
def test_fix_leaves_the_rest_of_the_file_alone(name, pattern):
    solution, problem = fixture(name)
    before = Path(solution).read_text()
    after = apply_fix(pattern, solution, problem)
    removed = [l for l in difflib.ndiff(before.splitlines(), after.splitlines()) if l.startswith("- ")]
    assert removed and len(removed) <= 6
    assert before.splitlines()[:5] == after.splitlines()[:5]


@pytest.mark.slow
@pytest.mark.parametrize("name,pattern", CASES + [("elementwise", "nv.hardcoded-config")])
def test_fixed_kernel_matches_the_reference_under_the_interpreter(tmp_path, name, pattern):
    solution, problem = fixture(name)
    fixed = apply_fix(pattern, solution, problem)
    result = interpret(*write_pair(tmp_path / name, fixed, problem))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "MISMATCH" not in result.stdout


@pytest.mark.slow
def test_autotuned_rewrite_runs_every_config(tmp_path):
    solution, problem = fixture("elementwise")
    fixed = apply_fix("nv.hardcoded-config", solution, problem)
    configs = len(re.findall(r"triton\.Config\(", fixed))
    result = interpret(*write_pair(tmp_path / "tuned", fixed, problem))
    assert result.returncode == 0, result.stdout + result.stderr
    trials = int(re.search(r"autotune trials: (\d+)", result.stdout).group(1))
    assert trials >= configs  # one trial per config per distinct key


def test_autotune_space_frees_only_tiling_sizes():
    solution, problem = fixture("gemm_rowmajor")
    fixed = apply_fix("nv.hardcoded-config", solution, problem)
    assert "@triton.autotune(" in fixed
    assert "BLOCK_M=64" not in fixed and "num_warps=4)" not in fixed.split("class ModelNew")[1]
    assert 'META["BLOCK_M"]' in fixed and 'META["BLOCK_N"]' in fixed
    assert re.search(r"key=\['M', 'N'", fixed)


def test_autotune_keeps_the_original_config_first():
    solution, problem = fixture("elementwise")
    fixed = apply_fix("nv.hardcoded-config", solution, problem)
    first = re.search(r"triton\.Config\((\{[^}]*\}), num_warps=(\d+)", fixed)
    assert first.group(1) == "{'BLOCK': 128}" and first.group(2) == "4"


def test_autotune_zeroes_atomically_updated_outputs(pair):
    labeled = LABELED / "k12"
    solution, problem = pair((labeled / "solution.py").read_text(), str(labeled / "problem.py"))
    fixed = apply_fix("nv.hardcoded-config", solution, problem)
    assert "reset_to_zero=['out_ptr']" in fixed


def test_a_lone_tile_size_beside_a_fixed_side_keeps_the_tile_within_the_registers():
    """36_rms_norm's tile is (next_power_of_2(features), BLOCK_S): the elementwise space (BLOCK_S up
    to 4096 beside 128 features) spilled so far that one candidate did not compile in 300 s."""
    kernel = ROOT / "kernels" / "level1" / "36_rms_norm"
    fixed = apply_fix("nv.hardcoded-config", kernel / "solution.py", kernel / "problem.py")
    blocks = [int(b) for b in re.findall(r"triton\.Config\(\{'BLOCK_S': (\d+)\}", fixed)]
    assert blocks[0] == 64 and sorted(set(blocks)) == [32, 64, 128]  # 128 features x 128 = TILE_ELEMENTS_CAP


def test_grouped_order_adds_a_defaulted_group_parameter():
    solution, problem = fixture("gemm_rowmajor")
    fixed = apply_fix("nv.gemm-no-grouped-order", solution, problem)
    assert "GROUP_SIZE_M: tl.constexpr = 8" in fixed
    assert "tl.program_id(1) * tl.num_programs(0) + tl.program_id(0)" in fixed


def test_scalar_access_hints_state_what_every_case_makes_true():
    solution, problem = fixture("rows_unaligned")
    fixed = apply_fix("nv.scalar-access", solution, problem)
    # rows of 1000 and 3000 fp32 elements start on 32-byte boundaries: 16-byte vectors of 4.
    assert "tl.multiple_of(x_ptr + row * stride + cols, 16), 4)" in fixed
    assert "tl.max_constancy(cols < n_cols, 4)" in fixed


def test_scalar_access_refuses_hints_that_some_case_makes_false(pair):
    labeled = LABELED / "k19"
    source = (labeled / "solution.py").read_text()
    problem = FIXTURES / "rows_unaligned" / "problem.py"
    odd = Path(pair(source, str(problem))[1])
    odd.write_text(odd.read_text().replace('{"rows": 4096, "dim": 3000}', '{"rows": 4096, "dim": 3001}'))
    with pytest.raises(NotApplicable):
        apply_fix("nv.scalar-access", str(odd.parent / "solution.py"), str(odd))


def test_tiny_block_refuses_a_block_that_covers_a_whole_row():
    solution, problem = fixture("rows_unaligned")
    with pytest.raises(NotApplicable, match="whole row"):
        apply_fix("nv.tiny-block", solution, problem)


def test_mma_fix_refuses_a_batched_dot(pair):
    source = (FIXTURES / "gemm_small_tile" / "solution.py").read_text()
    solution, problem = pair(source, str(FIXTURES / "gemm_small_tile" / "problem.py"))
    text = Path(solution).read_text().replace("acc += tl.dot(a, b)", "acc += tl.sum(tl.dot(a[None], b[None]), 0)")
    Path(solution).write_text(text)
    with pytest.raises(NotApplicable, match="batched"):
        apply_fix("nv.mma-v2-on-hopper", solution, problem)


def test_unpipelined_fix_refuses_when_stages_are_not_the_cause():
    solution, problem = fixture("gemm_rowmajor")
    with pytest.raises(NotApplicable):
        apply_fix("nv.unpipelined-loop", solution, problem)


def test_unknown_pattern_has_no_fix():
    solution, problem = fixture("elementwise")
    with pytest.raises(NotApplicable, match="no mechanical fix"):
        apply_fix("nv.register-spill", solution, problem)
