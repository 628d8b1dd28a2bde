"""nv.loop-carried-reduction's mechanical fix: the running reduction leaves the loop, the kernel
still computes the same thing (under Triton's interpreter), and every form it cannot be sure of is
refused with the reason."""
from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from ladder.diagnoser.triage import triage
from ladder.diagnoser.triage.fixes import NotApplicable, apply_fix

from .triage_helpers import FIXTURES, interpret, write_pair

PATTERN = "nv.loop-carried-reduction"
MATVEC = Path(__file__).resolve().parents[3] / "kernels" / "level1" / "04_matvec"
SOLUTION, PROBLEM = str(MATVEC / "solution.py"), str(MATVEC / "problem.py")
MOMENTS = FIXTURES / "row_moments"

ROW_SUM_OF_SQUARES = '''import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_sumsq_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    total = 0.0
    for start in range(0, n_cols, BLOCK):
        x = tl.load(x_ptr + row * n_cols + start + offs, mask=start + offs < n_cols, other=0.0)
        total += tl.sum(x * x, axis=0)
    tl.store(out_ptr + row, total)


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty(x.shape[0], device=x.device, dtype=torch.float32)
        row_sumsq_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=256, num_warps=4)
        return out
'''
ROW_SUM_OF_SQUARES_PROBLEM = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return (x * x).sum(dim=1)


def get_inputs():
    return [torch.randn(8, 3000)]


def get_init_inputs():
    return []


def get_test_cases():
    return [{}]
'''


def changed(before: str, after: str) -> tuple[list[str], list[str]]:
    diff = list(difflib.ndiff(before.splitlines(), after.splitlines()))
    return [l[2:].strip() for l in diff if l.startswith("- ")], [l[2:].strip() for l in diff if l.startswith("+ ")]


def test_matvec_accumulates_its_tile_and_reduces_once_after_the_loop():
    assert PATTERN in {f.pattern for f in triage(SOLUTION, PROBLEM)}
    fixed = apply_fix(PATTERN, SOLUTION, PROBLEM)
    removed, added = changed(Path(SOLUTION).read_text(), fixed)
    assert removed == ["acc = tl.zeros((BLOCK_M,), dtype=tl.float32)",
                       "acc += tl.sum(a.to(tl.float32) * x.to(tl.float32)[None, :], axis=1)"]
    assert added == ["acc = tl.zeros((BLOCK_M, BLOCK_K), dtype=tl.float32)",
                     "acc += a.to(tl.float32) * x.to(tl.float32)[None, :]",
                     "acc = tl.sum(acc, axis=1)"]
    assert PATTERN not in {f.pattern for f in triage(fixed, PROBLEM)}


def test_sums_maxima_and_minima_each_keep_their_identity_and_are_reduced_in_source_order():
    fixed = apply_fix(PATTERN, str(MOMENTS / "solution.py"), str(MOMENTS / "problem.py"))
    _, added = changed((MOMENTS / "solution.py").read_text(), fixed)
    assert added == ["s = tl.zeros((BLOCK_R, BLOCK_C), dtype=tl.float32)",
                     "q = tl.zeros((BLOCK_R, BLOCK_C), dtype=tl.float32)",
                     'hi = tl.full((BLOCK_R, BLOCK_C), float("-inf"), dtype=tl.float32)',
                     'lo = tl.full((BLOCK_R, BLOCK_C), float("inf"), dtype=tl.float32)',
                     "s += x", "q += x * x",
                     'hi = tl.maximum(hi, tl.where(mask, x, float("-inf")))',
                     'lo = tl.minimum(lo, tl.where(mask, x, float("inf")))',
                     "s = tl.sum(s, axis=1)", "q = tl.sum(q, axis=1)", "hi = tl.max(hi, axis=1)",
                     "lo = tl.min(lo, axis=1)"]


def test_a_scalar_running_sum_becomes_a_block_of_partial_sums(tmp_path):
    solution, problem = write_source(tmp_path, ROW_SUM_OF_SQUARES)
    _, added = changed(ROW_SUM_OF_SQUARES, apply_fix(PATTERN, solution, problem))
    assert added == ["total = tl.zeros((BLOCK,), dtype=tl.float32)", "total += x * x", "total = tl.sum(total, axis=0)"]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["matvec", "moments", "sum of squares"])
def test_the_rewritten_kernel_matches_the_reference_under_the_interpreter(tmp_path, name):
    if name == "sum of squares":
        solution, problem = write_source(tmp_path / "src", ROW_SUM_OF_SQUARES)
    else:
        solution, problem = (SOLUTION, PROBLEM) if name == "matvec" else \
            (str(MOMENTS / "solution.py"), str(MOMENTS / "problem.py"))
    result = interpret(*write_pair(tmp_path / "fixed", apply_fix(PATTERN, solution, problem), problem))
    assert result.returncode == 0 and "MISMATCH" not in result.stdout, result.stdout + result.stderr


@pytest.mark.parametrize("edit,reason", [
    (("acc += tl.sum(", "tl.store(y_ptr + rows, acc, mask=rows < M)\n        acc += tl.sum("),
     "the loop uses `acc` outside its update"),
    (("acc = tl.zeros((BLOCK_M,), dtype=tl.float32)", "acc = tl.full((BLOCK_M,), 1.0, dtype=tl.float32)"),
     "does not start at the identity of tl.sum"),
    (("acc += tl.sum(a.to(tl.float32) * x.to(tl.float32)[None, :], axis=1)",
      "acc += tl.sum(scaled(a, x), axis=1)"),
     "cannot be read off the source"),
    (("acc += tl.sum(a.to(tl.float32) * x.to(tl.float32)[None, :], axis=1)",
      "acc += tl.sum(a.to(tl.float32) * x.to(tl.float32)[None, :] + acc[:, None], axis=1)"),
     "depends on `acc` itself"),
    (("    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)\n    for k", "    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)\n"
      "    tl.store(y_ptr + rows, acc, mask=rows < M)\n    for k"), "is not set just before the loop"),
])
def test_what_it_cannot_be_sure_of_is_refused_with_the_reason(tmp_path, edit, reason):
    source = Path(SOLUTION).read_text()
    assert edit[0] in source
    solution, problem = write_source(tmp_path, source.replace(edit[0], edit[1]), PROBLEM)
    with pytest.raises(NotApplicable, match=reason):
        apply_fix(PATTERN, solution, problem)


def test_a_scan_carry_is_not_a_running_reduction():
    cumsum = MATVEC.parent / "89_cumsum"
    with pytest.raises(NotApplicable, match="the loop uses `carry` outside its update"):
        apply_fix(PATTERN, str(cumsum / "solution.py"), str(cumsum / "problem.py"))


def write_source(folder: Path, source: str, problem: str | None = None) -> tuple[str, str]:
    folder.mkdir(parents=True, exist_ok=True)
    if problem is None:
        (folder / "reference.py").write_text(ROW_SUM_OF_SQUARES_PROBLEM)
        problem = str(folder / "reference.py")
    return write_pair(folder, source, problem)
