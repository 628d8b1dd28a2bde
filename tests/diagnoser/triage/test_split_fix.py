"""nv.small-grid's mechanical fix, split-K: the reduction loop shared out over a second grid axis,
partial sums added atomically (through a float32 buffer and a cast kernel for a float16 output),
the same values under the judge, and a refusal with its reason for every form where a split would
change the result."""
from __future__ import annotations

from pathlib import Path

import pytest

from ladder.diagnoser.triage.fixes import NotApplicable, apply_fix

from .triage_helpers import write_pair

PATTERN = "nv.small-grid"
MATVEC = Path(__file__).resolve().parents[3] / "kernels" / "level1" / "04_matvec"
SOURCE = (MATVEC / "solution.py").read_text()
UPDATE = "        acc += tl.sum(a.to(tl.float32) * x.to(tl.float32)[None, :], axis=1)\n"
STORE = "    tl.store(y_ptr + rows, acc.to(y_ptr.dtype.element_ty), mask=rows < M)\n"


def variant(tmp_path: Path, *replacements: tuple[str, str], problem: str | None = None) -> tuple[str, str]:
    text = SOURCE
    for old, new in replacements:
        assert old in text
        text = text.replace(old, new)
    problem_text = (MATVEC / "problem.py").read_text()
    if problem is not None:
        problem_text = problem_text.replace("dtype=torch.float16", problem)
    (tmp_path / "source_problem.py").write_text(problem_text)
    return write_pair(tmp_path / "k", text, str(tmp_path / "source_problem.py"))


def test_the_matvec_walks_one_chunk_of_k_per_program_of_the_second_axis():
    fixed = [line.strip() for line in apply_fix(PATTERN, MATVEC / "solution.py", MATVEC / "problem.py").splitlines()]
    assert fixed[fixed.index("acc = tl.zeros((BLOCK_M,), dtype=tl.float32)") + 1:][:3] == [
        "split_chunk = tl.cdiv(tl.cdiv(K, tl.num_programs(1)), BLOCK_K) * BLOCK_K",
        "split_start = tl.program_id(1) * split_chunk",
        "for k in range(split_start, tl.minimum(split_start + split_chunk, K), BLOCK_K):"]
    assert 'tl.atomic_add(y_ptr + rows, acc.to(y_ptr.dtype.element_ty), mask=rows < M, sem="relaxed")' in fixed
    # float16 output: the partial sums go to a zeroed float32 buffer, which a cast kernel writes out
    launch = next(line for line in fixed if line.startswith("matvec_kernel["))
    assert launch.startswith("matvec_kernel[(triton.cdiv(M, BLOCK_M), max(1, min(triton.cdiv(264, "
                             "triton.cdiv(M, BLOCK_M)), triton.cdiv(K, 4 * BLOCK_K))))](A, B, C_float32,")
    assert fixed[fixed.index(launch) - 1] == "C_float32 = torch.zeros_like(C, dtype=torch.float32)"
    assert "matvec_kernel_cast[(triton.cdiv(C.numel(), 1024),)](C_float32, C, C.numel(), BLOCK=1024)" in fixed


def test_a_float32_output_is_zeroed_and_added_into_directly(tmp_path):
    fixed = apply_fix(PATTERN, *variant(tmp_path, problem="dtype=torch.float32"))
    assert "C = torch.zeros((M, 1), device=A.device, dtype=A.dtype)" in fixed
    assert "_cast" not in fixed and "C_float32" not in fixed


def test_an_autotuned_kernel_zeroes_the_output_before_each_trial(tmp_path):
    """After the configuration search, as the rules proposer composes them."""
    tuned = apply_fix("nv.hardcoded-config", MATVEC / "solution.py", MATVEC / "problem.py")
    fixed = apply_fix(PATTERN, *write_pair(tmp_path / "tuned", tuned, str(MATVEC / "problem.py")))
    assert "    key=['M', 'K', 'stride_am'],\n    reset_to_zero=['y_ptr'],\n)" in fixed
    assert "triton.cdiv(K, 4 * META['BLOCK_K'])" in fixed


REFUSED = {
    "a value after the sum that is not linear in it": (
        [(STORE, "    acc = tl.maximum(acc, 0.0)\n" + STORE)], "is not a sum, cast or scaling"),
    "the sum read inside the loop": (
        [(UPDATE, UPDATE + "        x = x * tl.sum(acc, axis=0)\n")], "is read inside the loop"),
    "a store inside the loop": (
        [(UPDATE, UPDATE + "        tl.store(y_ptr + rows, acc, mask=rows < M)\n")], "the loop stores"),
    "state carried between iterations": (
        [("    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)\n",
          "    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)\n    scale = 1.0\n"),
         (UPDATE, "        acc += scale * tl.sum(a.to(tl.float32) * x.to(tl.float32)[None, :], axis=1)\n"
                  "        scale = scale * 0.5\n")], "is carried from one iteration to the next"),
    "an output that is not allocated empty": (
        [("C = torch.empty((M, 1), device=A.device, dtype=A.dtype)",
          "C = torch.ones((M, 1), device=A.device, dtype=A.dtype)")], "is not allocated with torch.empty"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refuses_where_a_split_would_change_the_result(tmp_path, case):
    replacements, reason = REFUSED[case]
    with pytest.raises(NotApplicable, match=reason):
        apply_fix(PATTERN, *variant(tmp_path, *replacements))


@pytest.mark.slow
def test_the_split_matvec_passes_the_judge_under_the_interpreter(tmp_path):
    """Both ways out: the float16 output through the cast kernel, a float32 one added into directly."""
    from ladder.runner.bench import bench

    half = tmp_path / "half.py"
    half.write_text(apply_fix(PATTERN, MATVEC / "solution.py", MATVEC / "problem.py"))
    result = bench(MATVEC / "problem.py", {"half": half}, "interpret", quick=True, seeds=2, timeout=900)
    assert result["solutions"]["half"]["ok"], result["solutions"]["half"]
    solution, problem = variant(tmp_path, problem="dtype=torch.float32")
    single = tmp_path / "single.py"
    single.write_text(apply_fix(PATTERN, solution, problem))
    result = bench(Path(problem), {"single": single}, "interpret", quick=True, seeds=2, timeout=900)
    assert result["solutions"]["single"]["ok"], result["solutions"]["single"]
