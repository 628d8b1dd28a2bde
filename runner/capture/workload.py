"""What a capture runs while it watches Triton: a problem/solution pair case by case, or any script.

`run_target` tells the two apart (a file with no `class ModelNew` is a script) and calls
`on_case(i)` before case i's forward, so that a capture tags what follows with the case.
"""
from __future__ import annotations

import re
import runpy
import sys
from pathlib import Path
from typing import Any, Callable

from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)


def resolve_problem(solution_path: str | Path, problem_path: str | Path | None) -> Path | None:
    """The problem file: the one given, else a `problem.py` beside a solution (the suite's layout)."""
    if problem_path is not None:
        return Path(problem_path)
    sibling = Path(solution_path).resolve().parent / "problem.py"
    if sibling.is_file() and sibling != Path(solution_path).resolve() and not is_script(solution_path):
        return sibling
    return None


def run_workload(solution_path: str | Path, problem_path: str | Path, case_index: int | None = None, *,
                 device: str = "cuda", on_case: Callable[[int | None], Any] | None = None) -> None:
    """Run the solution's forward once per case of its problem (or only case `case_index`).

    `on_case(i)` is called before case i's forward, so a capture can tag what follows with the case.
    """
    import torch

    from ladder.runner.inputs import make_init_inputs, make_inputs, seed_everything
    from ladder.runner.problem import ProblemError, load_problem, load_solution

    on_case = on_case or (lambda case: None)
    problem = load_problem(problem_path)
    model_new = load_solution(solution_path)
    indices = range(len(problem.cases)) if case_index is None else [case_index]
    for index in indices:
        if not 0 <= index < len(problem.cases):
            raise ProblemError(f"case {index} out of range: {problem.path.name} has {len(problem.cases)} case(s)")
        # built as the judge builds them, on the device where the file allows: a GEMV's 1 G-element
        # input drawn on the host and copied over cost the capture seconds per case
        case, on_device = problem.cases[index], torch.device(device)
        init_inputs = make_init_inputs(problem, case, index, on_device)
        seed_everything(index)
        with problem.applied(case), on_device:
            model = model_new(*init_inputs).to(device)
        inputs = make_inputs(problem, case, index, on_device)
        on_case(index)
        with torch.no_grad():
            model(*inputs)
        if device == "cuda":
            torch.cuda.synchronize()


def run_script(script_path: str | Path, argv: list[str] | None = None) -> None:
    """Run a Python script as `__main__` with the given arguments, as `python script.py argv...`."""
    script_path = str(Path(script_path).resolve())
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [script_path, *(argv or [])]
    sys.path.insert(0, str(Path(script_path).parent))
    try:
        runpy.run_path(script_path, run_name="__main__")
    except SystemExit as done:  # a script may end itself; only a failing exit is an error
        if done.code not in (None, 0):
            raise RuntimeError(f"{Path(script_path).name} exited with status {done.code}") from done
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path


def is_script(solution_path: str | Path) -> bool:
    """A file with no `class ModelNew` is a script that launches kernels itself."""
    return re.search(r"^class\s+ModelNew\b", Path(solution_path).read_text(), re.MULTILINE) is None


def run_target(solution_path: str | Path, problem_path: str | Path | None, case_index: int | None, *,
               device: str, on_case: Callable[[int | None], Any], argv: list[str] | None = None) -> None:
    """A solution's forward per case, or a script once (as case None)."""
    from ladder.runner.problem import ProblemError

    if not Path(solution_path).is_file():
        raise ProblemError(f"file not found: {solution_path}")
    problem_path = resolve_problem(solution_path, problem_path)
    if problem_path is None:
        if not is_script(solution_path):
            raise ProblemError(f"{Path(solution_path).name} defines ModelNew but no problem was given "
                               "(pass --problem) and there is no problem.py beside it")
        on_case(None)
        run_script(solution_path, argv)
    else:
        run_workload(solution_path, problem_path, case_index, device=device, on_case=on_case)
