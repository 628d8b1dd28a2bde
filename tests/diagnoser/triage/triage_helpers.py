"""Helpers shared by the triage tests: the fixture kernels and a runner for the interpreter check."""
from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
ROOT = HERE.parents[2]
SETS = ROOT / "bench" / "sets" / "triage"  # the evaluation sets
LABELED = SETS / "labeled"


def fixture(name: str) -> tuple[str, str]:
    return str(FIXTURES / name / "solution.py"), str(FIXTURES / name / "problem.py")


def write_pair(folder: Path, solution_text: str, problem: str) -> tuple[str, str]:
    """A solution/problem pair in `folder` (the problem copied from an existing file)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "solution.py").write_text(solution_text)
    (folder / "problem.py").write_text(Path(problem).read_text())
    return str(folder / "solution.py"), str(folder / "problem.py")


def interpret(solution: str, problem: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TRITON_INTERPRET": "1"}
    return subprocess.run([sys.executable, str(HERE / "interpret_check.py"), solution, problem],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)


# Kernels written for Ascend NPUs, one folder per catalog pattern their Triton-Ascend IR shows:
# solution.py shows it (its line ends with `# @shows`), fixed.py is the same kernel without it.
ASCEND = FIXTURES / "ascend"
ASCEND_PATTERNS = {
    "masked_fill": "npu.masked-load-fill",
    "discrete": "npu.discrete-access",
    "int64": "npu.int64-scalar-fallback",
    "where": "npu.where-condition-dtype",
    "ub": "npu.ub-overflow",
    "tail": "npu.unaligned-tail-axis",
    "grid": "npu.grid-exceeds-cores",
}


def shown_line(solution: str | Path) -> int:
    """The line marked `# @shows` in a fixture."""
    for number, text in enumerate(Path(solution).read_text().splitlines(), start=1):
        if text.rstrip().endswith("# @shows"):
            return number
    raise LookupError(f"no `# @shows` line in {solution}")


@functools.lru_cache(maxsize=None)
def ascend_capture(solution: str, problem: str) -> tuple:
    """Triton-Ascend's kernels for a solution and the facts read from them (compiled once per session)."""
    from ladder.diagnoser.ir import extract_facts
    from ladder.runner.backends.aot import capture

    kernels = capture(solution, problem, target="ascend")
    return tuple(kernels), tuple(extract_facts(kernels))
