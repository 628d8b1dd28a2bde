"""Load problem and solution files in KernelBench's format, plus ladder's ``get_cases()`` extension.

A **problem file** (unchanged KernelBench files work) defines:

- ``class Model(nn.Module)``: the PyTorch reference;
- module-level size constants (``batch_size = 16``, ``dim = 16384``, ...);
- ``get_inputs()``: the forward's arguments, built from those constants;
- ``get_init_inputs()``: the constructor's arguments.

Optional extensions, all read from the same module:

- ``get_cases()``: a list of dicts of size constants, one per input case. For each case the harness
  sets those constants on the module (after restoring the file's own values, so cases never leak
  into each other) and then calls ``get_inputs()`` / ``get_init_inputs()``. Without it the file has
  one case, ``{}`` (the constants as written).
- ``flops(case)`` / ``bytes(case)``: work and traffic of one forward for the roofline. They are
  called with the case's constants already applied; the dict is passed for convenience. Without
  ``bytes`` the runner counts each input read once and each output written once.
- ``ALLOW_TF32``: ``True``/``False`` overrides whether fp32 outputs get tf32 tolerances (see
  ``ladder.runner.compare``); unset means "allowed when the reference contains a contraction".

A **solution file** defines ``class ModelNew(nn.Module)`` with the same constructor as ``Model``,
whose ``forward`` launches Triton kernels.

The API, used by the runner and by ``ladder suite``::

    problem = load_problem("kernels/level1/19_relu/problem.py")
    for case in problem.cases:                 # list of dicts; [{}] without get_cases()
        with problem.applied(case):            # module constants set for this case
            model = problem.Model(*problem.get_init_inputs())
            out = model(*problem.get_inputs())
            problem.flops(case), problem.bytes(case)   # None when the file does not say
    solution_cls = load_solution("solution.py")         # the ModelNew class

Bad files raise ``ProblemError`` with a one-line message naming the file and what is wrong.
"""
from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import math
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from ladder.runner import source_only
from ladder.runner.errors import one_line
from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)

# Under Triton's interpreter every program of a kernel runs as NumPy on the CPU: a case with more
# input elements than this takes minutes there, not seconds (``ladder bench`` warns before one).
QUICK_MAX_ELEMENTS = 1 << 22


class ProblemError(Exception):
    """A problem or solution file that cannot be used as written (the message is one line)."""


def load_module(path: str | Path, role: str) -> ModuleType:
    """Import a Python file as a fresh module with a unique name (two ``solution.py`` can coexist).

    The module is registered in ``sys.modules`` because Triton's JIT and dataclasses look modules up
    by name. Errors in the file become ``ProblemError`` with the file, line and the error's text. It is
    compiled from its source, never from a bytecode cache (``source_only``).
    """
    path = Path(path).resolve()
    if not path.is_file():
        raise ProblemError(f"{role} file not found: {path}")
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:10]
    name = f"ladder_{role}_{path.stem}_{digest}"
    spec = importlib.util.spec_from_file_location(name, path, loader=source_only.SourceLoader(name, str(path)))
    if spec is None or spec.loader is None:
        raise ProblemError(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as error:
        sys.modules.pop(name, None)
        raise ProblemError(f"{path.name}:{error.lineno}: SyntaxError: {error.msg}") from error
    except Exception as error:
        sys.modules.pop(name, None)
        raise ProblemError(f"{path.name}: import failed: {one_line(error)}") from error
    return module


@dataclass
class Problem:
    """A loaded problem file: the reference model, its input builders and its cases."""

    path: Path
    module: ModuleType
    cases: list[dict[str, Any]]
    _defaults: dict[str, Any] = field(default_factory=dict, repr=False)
    # ``quick`` on a problem with no small test cases: the sizes halved for the interpreter, with
    # what the file sets them to (``_shrunk``); empty when the cases are the file's own.
    shrunk_from: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.path.parent.name if self.path.stem == "problem" else self.path.stem

    @property
    def Model(self) -> type:  # the KernelBench name
        return self.module.Model

    def get_inputs(self) -> list:
        return list(self.module.get_inputs())

    def get_init_inputs(self) -> list:
        return list(self.module.get_init_inputs())

    @contextlib.contextmanager
    def applied(self, case: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """Set the case's constants on the module for the duration of the block, then restore."""
        for key, value in self._defaults.items():
            setattr(self.module, key, value)
        for key, value in case.items():
            setattr(self.module, key, value)
        try:
            yield case
        finally:
            for key, value in self._defaults.items():
                setattr(self.module, key, value)

    def flops(self, case: dict[str, Any]) -> float | None:
        return self._optional_number("flops", case)

    def bytes(self, case: dict[str, Any]) -> float | None:
        return self._optional_number("bytes", case)

    @property
    def allow_tf32(self) -> bool | None:
        value = getattr(self.module, "ALLOW_TF32", None)
        return None if value is None else bool(value)

    def _optional_number(self, name: str, case: dict[str, Any]) -> float | None:
        function: Callable | None = getattr(self.module, name, None)
        if function is None:
            return None
        with self.applied(case):
            value = function(case)
        return None if value is None else float(value)


def case_label(case: dict[str, Any]) -> str:
    """``M=4096, N=1000`` for a case dict; ``default`` for the file's own constants."""
    return ", ".join(f"{key}={value}" for key, value in case.items()) or "default"


def load_problem(path: str | Path, quick: bool = False) -> Problem:
    """Load and validate a problem file (see the module docstring for the format).

    ``quick`` takes the file's small ``get_test_cases()`` as its cases, or where it has none its
    smallest case (the least product of its numeric constants), its sizes halved until its inputs
    are within ``QUICK_MAX_ELEMENTS`` (``_shrunk``): what the CPU interpreter can run in seconds.
    """
    module = load_module(path, "problem")
    where = Path(path).name
    for required in ("Model", "get_inputs", "get_init_inputs"):
        if not hasattr(module, required):
            raise ProblemError(f"{where}: missing `{required}` (a KernelBench problem defines Model, "
                               "get_inputs and get_init_inputs)")
    cases = _read_cases(module, where, "get_test_cases" if quick and hasattr(module, "get_test_cases") else "get_cases")
    shrunk: dict[str, Any] = {}
    if quick and not hasattr(module, "get_test_cases"):
        smallest = min(cases, key=_case_size)
        cases = [_shrunk(Problem(path=Path(path).resolve(), module=module, cases=[smallest],
                                 _defaults={key: getattr(module, key) for key in smallest}), smallest)]
        written = {key: smallest.get(key, getattr(module, key)) for key in cases[0]}
        shrunk = {key: value for key, value in written.items() if cases[0][key] != value}
    defaults = {key: getattr(module, key) for case in cases for key in case}
    return Problem(path=Path(path).resolve(), module=module, cases=cases, _defaults=defaults, shrunk_from=shrunk)


def _shrunk(problem: Problem, case: dict[str, Any]) -> dict[str, Any]:
    """``case`` with its sizes halved until its inputs fit what the interpreter runs in seconds.

    A problem with no ``get_test_cases()`` has only its real sizes, often far past
    ``QUICK_MAX_ELEMENTS``. The sizes are its module-level integers: the largest is halved (rounded
    up, so an odd size, and the tail it makes, stays odd) while that shrinks the inputs, and an
    integer whose halving does not (a seed, a class count) is left as written. The case is returned
    unchanged when the inputs cannot be counted or no halving gets them under the cap."""
    elements = input_elements(problem, case)
    if elements is None or elements <= QUICK_MAX_ELEMENTS:
        return case
    sizes = {name: value for name, value in vars(problem.module).items()
             if not name.startswith("_") and type(value) is int and value >= 2}
    sizes.update({name: value for name, value in case.items() if type(value) is int and value >= 2})
    current, candidates = dict(case), set(sizes)
    for _ in range(256):
        if not candidates:
            break
        # sorted: ties go by name, the same in every process (the judge and each contestant load it)
        name = max(sorted(candidates), key=lambda n: current.get(n, sizes[n]))
        value = current.get(name, sizes[name])
        trial = {**current, name: (value + 1) // 2}
        problem._defaults.setdefault(name, sizes[name])
        smaller = input_elements(problem, trial)
        if smaller is None or smaller >= elements or trial[name] < 2:
            candidates.discard(name)
            continue
        current, elements = trial, smaller
        if elements <= QUICK_MAX_ELEMENTS:
            return current
    return case


def input_elements(problem: Problem, case: dict[str, Any]) -> int | None:
    """How many elements the forward's tensor inputs hold in ``case``, counted on PyTorch's meta
    device (shapes only, nothing allocated); None when ``get_inputs()`` cannot build them there."""
    import torch

    try:
        with problem.applied(case), torch.device("meta"):
            inputs = problem.get_inputs()
    except Exception:  # noqa: BLE001 - a get_inputs() that needs real data (`.item()`, numpy) has no count
        return None
    return sum(value.numel() for value in _tensors(inputs))


def _tensors(value: Any) -> Iterator[Any]:
    import torch

    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _tensors(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _tensors(item)


def _case_size(case: dict[str, Any]) -> float:
    return math.prod(abs(value) for value in case.values() if isinstance(value, (int, float)) and not isinstance(value, bool))


def _read_cases(module: ModuleType, where: str, function: str = "get_cases") -> list[dict[str, Any]]:
    if not hasattr(module, function):
        return [{}]
    try:
        cases = list(getattr(module, function)())
    except Exception as error:
        raise ProblemError(f"{where}: {function}() failed: {one_line(error)}") from error
    if not cases:
        raise ProblemError(f"{where}: {function}() returned no cases")
    for index, case in enumerate(cases):
        if not isinstance(case, dict):
            raise ProblemError(f"{where}: {function}()[{index}] is a {type(case).__name__}, not a dict")
        unknown = [key for key in case if not hasattr(module, key)]
        if unknown:
            raise ProblemError(f"{where}: case {index} sets {', '.join(map(repr, unknown))}, "
                               "which the file does not define at module level")
    return [dict(case) for case in cases]


def load_solution(path: str | Path) -> type:
    """Import a solution file and return its ``ModelNew`` class. The files beside it are importable
    (``import helper``), as when running it as a script, from their source only (``source_only``)."""
    folder = str(Path(path).resolve().parent)
    source_only.install(folder)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    module = load_module(path, "solution")
    model_new = getattr(module, "ModelNew", None)
    if model_new is None:
        raise ProblemError(f"{Path(path).name}: missing `class ModelNew(nn.Module)`")
    return model_new
