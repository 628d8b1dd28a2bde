"""The suite's operators: where they live, how users name them, and their small test cases."""
from __future__ import annotations

import contextlib
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

KERNELS_ROOT = Path(__file__).resolve().parents[2] / "kernels"
LEVELS = (1, 2)


class SuiteError(Exception):
    """A usage error (unknown operator, empty selection): one line, exit status 2."""

@dataclass(frozen=True)
class Operator:
    """One operator of the suite: ``kernels/level1/23_softmax``."""

    level: int
    number: int
    name: str  # without the number: "softmax"
    folder: Path

    @property
    def key(self) -> str:
        return f"level{self.level}/{self.folder.name}"

    @property
    def problem(self) -> Path:
        return self.folder / "problem.py"

    @property
    def solution(self) -> Path:
        return self.folder / "solution.py"

    def matches(self, selector: str) -> bool:
        """``level1/23_softmax``, ``23_softmax``, ``softmax`` or ``23`` (with or without ``kernels/``)."""
        selector = selector.strip().strip("/").removeprefix("kernels/")
        if selector.isdigit():
            return int(selector) == self.number
        return selector in (self.key, self.folder.name, self.name)


def discover(root: Path = KERNELS_ROOT, level: int | None = None,
             only: tuple[str, ...] = ()) -> list[Operator]:
    """The operators under ``root``, in (level, number) order, filtered by level and selectors."""
    operators = []
    for lvl in LEVELS:
        for folder in sorted((root / f"level{lvl}").glob("*_*")):
            number, _, name = folder.name.partition("_")
            if folder.is_dir() and number.isdigit() and (folder / "problem.py").is_file():
                operators.append(Operator(lvl, int(number), name, folder))
    operators.sort(key=lambda op: (op.level, op.number))
    if level is not None:
        operators = [op for op in operators if op.level == level]
    if only:
        unknown = [selector for selector in only if not any(op.matches(selector) for op in operators)]
        if unknown:
            raise SuiteError(f"no operator matches {', '.join(map(repr, unknown))}"
                             + (f" in level {level}" if level is not None else "")
                             + " (names look like level1/23_softmax, 23_softmax, softmax or 23)")
        operators = [op for op in operators if any(op.matches(selector) for selector in only)]
    if not operators:
        raise SuiteError(f"no operators found under {root}")
    return operators


def quick_problem_source(problem: Path) -> str:
    """A problem file that is ``problem`` with its ``get_test_cases()`` as its cases.

    The original source runs in the new module's own namespace, so the runner's per-case constants
    reach ``get_inputs()`` exactly as they would in the original file.
    """
    return (f'"""{problem}, with its small get_test_cases() as the cases (ladder suite --quick)."""\n'
            "from pathlib import Path as _Path\n\n"
            f"_ORIGINAL = _Path({str(problem.resolve())!r})\n"
            'exec(compile(_ORIGINAL.read_text(), str(_ORIGINAL), "exec"))\n'
            "get_cases = get_test_cases  # noqa: F821 (defined by the original)\n")


@contextlib.contextmanager
def quick_problems(operators: list[Operator]) -> Iterator[dict[str, Path]]:
    """Temporary problem files with the small test cases, by operator key."""
    with tempfile.TemporaryDirectory(prefix="ladder-suite-") as folder:
        paths = {}
        for op in operators:
            path = Path(folder) / f"level{op.level}" / op.folder.name / "problem.py"
            path.parent.mkdir(parents=True)
            path.write_text(quick_problem_source(op.problem))
            paths[op.key] = path
        yield paths
