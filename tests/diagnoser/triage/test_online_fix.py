"""nv.redundant-global-traffic's mechanical fix for a softmax's max and sum passes: one online pass
instead of two, the same values under Triton's interpreter, and a refusal (with its reason) for
every form it cannot be sure of."""
from __future__ import annotations

from pathlib import Path

import pytest

from ladder.diagnoser.triage import triage
from ladder.diagnoser.triage.fixes import NotApplicable, apply_fix

from .triage_helpers import interpret, write_pair

PATTERN = "nv.redundant-global-traffic"
KERNELS = Path(__file__).resolve().parents[3] / "kernels"
SOFTMAX = KERNELS / "level1" / "23_softmax"


def loops(source: str) -> int:
    return sum(line.strip().startswith("for ") for line in source.splitlines())


def test_softmax_reads_its_row_once_for_the_max_and_the_sum():
    solution, problem = str(SOFTMAX / "solution.py"), str(SOFTMAX / "problem.py")
    assert any(f.pattern == PATTERN and f.line == 24 for f in triage(solution, problem))
    fixed = apply_fix(PATTERN, solution, problem)
    assert loops(Path(solution).read_text()) == 3 and loops(fixed) == 2
    body = [line.strip() for line in fixed.splitlines()]
    start = body.index('row_max = tl.full((BLOCK_SIZE,), float("-inf"), dtype=tl.float32)')
    assert body[start:start + 11] == [
        'row_max = tl.full((BLOCK_SIZE,), float("-inf"), dtype=tl.float32)',
        "denom = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)",
        "for start in range(0, n_cols, BLOCK_SIZE):",
        'x = tl.load(x_row + start + cols, mask=start + cols < n_cols, other=float("-inf"))',
        "row_max_next = tl.maximum(row_max, x)",
        'row_max_shift = tl.where(row_max_next == float("-inf"), 0.0, row_max_next)',
        "denom = denom * tl.exp(row_max - row_max_shift) + tl.exp(x - row_max_shift)",
        "row_max = row_max_next",
        "m = tl.max(row_max, axis=0)",
        "",
        "denom = denom * tl.exp(row_max - m)"]
    # the finding at the sum pass is gone; the write pass still reads the row again, as it must
    assert not any(f.pattern == PATTERN and f.line == 24 for f in triage(fixed, problem))


@pytest.mark.slow
@pytest.mark.parametrize("operator", ["level1/23_softmax", "level1/95_cross_entropy",
                                      "level2/22_matmul_scale_residual_clamp_lse_mish"])
def test_the_online_pass_matches_the_reference_under_the_interpreter(tmp_path, operator):
    solution, problem = str(KERNELS / operator / "solution.py"), str(KERNELS / operator / "problem.py")
    result = interpret(*write_pair(tmp_path, apply_fix(PATTERN, solution, problem), problem))
    assert result.returncode == 0 and "MISMATCH" not in result.stdout, result.stdout + result.stderr


@pytest.mark.parametrize("edit,reason", [
    (("        denom += tl.exp(x - m)", "        denom += tl.exp(x - m)\n        tl.store(y_row + start + cols, x, mask=start + cols < n_cols)"),
     "does more than recompute"),
    (("        denom += tl.exp(x - m)", "        denom += tl.exp(2.0 * x - m)"), "the second loop.s update is not"),
    (("    denom = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)", "    denom = tl.full((BLOCK_SIZE,), 1.0, dtype=tl.float32)"),
     "does not start at 0.0"),
    (("    m = tl.max(row_max, axis=0)\n", "    m = tl.max(row_max, axis=0)\n    m = m * 0.5\n"), "changes between the loops"),
    (('other=float("-inf"))\n', 'other=float("-inf")) + 0.0 * row_max\n'), "values both loops compute read `row_max`"),
    (("    d = tl.sum(denom, axis=0)\n\n    for start in range(0, n_cols, BLOCK_SIZE):",
      "    d = tl.sum(denom, axis=0)\n\n    for start in range(0, n_cols - 1, BLOCK_SIZE):"), None),
])
def test_what_it_cannot_be_sure_of_is_refused_with_the_reason(tmp_path, edit, reason):
    source = (SOFTMAX / "solution.py").read_text()
    assert edit[0] in source
    solution, problem = write_pair(tmp_path, source.replace(edit[0], edit[1]), str(SOFTMAX / "problem.py"))
    if reason is None:  # the write pass walking another range changes nothing: the first two still fuse
        assert loops(apply_fix(PATTERN, solution, problem)) == 2
        return
    with pytest.raises(NotApplicable, match=reason):
        apply_fix(PATTERN, solution, problem)


def test_two_passes_over_different_ranges_are_not_fused(tmp_path):
    source = (SOFTMAX / "solution.py").read_text()
    second = "    denom = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)\n    for start in range(0, n_cols, BLOCK_SIZE):"
    assert second in source
    solution, problem = write_pair(tmp_path, source.replace(second, second.replace("range(0,", "range(BLOCK_SIZE,")),
                                   str(SOFTMAX / "problem.py"))
    with pytest.raises(NotApplicable, match="the next loop walks another range"):
        apply_fix(PATTERN, solution, problem)
