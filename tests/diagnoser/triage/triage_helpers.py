"""Helpers shared by the triage tests: the fixture kernels and a runner for the interpreter check."""
from __future__ import annotations

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
