"""Run each kernel of this set on its smallest test case under Triton's interpreter and compare it
with the problem's reference, computed in float64 where the reference allows it.

    python bench/sets/triage/blind2/interpret_check.py [FOLDER ...]     # default: every folder here

One line per kernel (`ok` or what went wrong); exit status 1 when any kernel fails. Meant to run in
its own process: TRITON_INTERPRET must be set before triton is imported.
"""
from __future__ import annotations

import os
import sys
import types
import traceback
from pathlib import Path

os.environ["TRITON_INTERPRET"] = "1"
HERE = Path(__file__).resolve().parent
REPO = HERE.parents[3]
sys.path.insert(0, str(REPO))
# Ascend solutions `import torch_npu`; on a machine without it an empty module stands in.
sys.modules.setdefault("torch_npu", types.ModuleType("torch_npu"))

import torch  # noqa: E402

from ladder.runner.backends.interpret import backend as interpret_backend  # noqa: E402
from ladder.runner.problem import load_problem, load_solution  # noqa: E402

TOLERANCE = {torch.float32: 2e-3, torch.float16: 1e-2, torch.bfloat16: 1.6e-2}


def run_each_config_once() -> None:
    """The autotuner benchmarks through the device driver, which the interpreter lacks: instead,
    every config runs once (so each one is checked for errors) and all tie, so the first wins."""
    from triton.runtime.autotuner import Autotuner

    def bench_once(kernel_call, quantiles=None):
        kernel_call()
        return [1.0, 1.0, 1.0]

    Autotuner.do_bench = property(lambda self: bench_once)


def kernel_folders() -> list[Path]:
    return sorted(path for path in HERE.iterdir() if (path / "solution.py").is_file())


def smallest_case(problem) -> dict:
    """The test case whose inputs hold the fewest elements."""
    module = problem.module
    cases = list(module.get_test_cases())

    def size(case: dict) -> int:
        with problem.applied(case):
            torch.manual_seed(0)
            return sum(t.numel() for t in _tensors(module.get_inputs()))
    return min(cases, key=size)


def _tensors(value) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in _tensors(item)]
    return []


def _to_double(value):
    if isinstance(value, torch.Tensor):
        return value.double() if value.is_floating_point() else value.clone()
    if isinstance(value, (list, tuple)):
        return type(value)(_to_double(item) for item in value)
    return value


def _clone(value):
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, (list, tuple)):
        return type(value)(_clone(item) for item in value)
    return value


def reference(problem, init_inputs, inputs):
    """The reference output in float64 (its parameters and floating inputs upcast) or, where the
    reference cannot run in float64, in the inputs' own dtypes."""
    torch.manual_seed(1234)
    model = problem.Model(*init_inputs)
    try:
        with torch.no_grad():
            return model.double()(*_to_double(inputs))
    except (RuntimeError, TypeError, NotImplementedError):
        torch.manual_seed(1234)
        model = problem.Model(*init_inputs)
        with torch.no_grad():
            return model(*_clone(inputs))


def compare(name: str, got, want) -> str | None:
    got_list, want_list = _tensors(got), _tensors(want)
    if len(got_list) != len(want_list):
        return f"{name}: {len(got_list)} outputs, reference has {len(want_list)}"
    for index, (g, w) in enumerate(zip(got_list, want_list)):
        if g.shape != w.shape:
            return f"{name}[{index}]: shape {tuple(g.shape)} vs reference {tuple(w.shape)}"
        if g.is_floating_point():
            tol = TOLERANCE.get(g.dtype, 2e-3)
            g64, w64 = g.double(), w.double()
            scale = w64.abs().max().item() if w64.numel() else 1.0
            if not torch.allclose(g64, w64, rtol=0.0, atol=tol * max(scale, 1e-30), equal_nan=False):
                worst = (g64 - w64).abs().nan_to_num(float("inf")).max().item()
                return f"{name}[{index}]: max abs error {worst:.3g} (tolerance {tol} relative to max |ref| {scale:.3g})"
        else:
            slack = 1 if g.dtype == torch.int8 else 0  # rounding ties of a quantizer
            if (g.long() - w.long()).abs().max().item() > slack:
                return f"{name}[{index}]: integer outputs differ"
    return None


def check(folder: Path) -> str | None:
    problem = load_problem(folder / "problem.py")
    model_new = load_solution(folder / "solution.py")
    case = smallest_case(problem)
    with problem.applied(case):
        torch.manual_seed(0)
        inputs = problem.get_inputs()
        init_inputs = problem.get_init_inputs()
    want = reference(problem, init_inputs, inputs)
    torch.manual_seed(1234)
    solution = model_new(*init_inputs)
    with torch.no_grad():
        got = solution(*_clone(inputs))
    return compare(folder.name, got, want)


def main(argv: list[str]) -> int:
    interpret_backend.setup()
    run_each_config_once()
    folders = [HERE / name for name in argv] if argv else kernel_folders()
    failures = 0
    for folder in folders:
        try:
            problem_msg = check(folder)
        except Exception:  # report every kernel, whatever breaks
            problem_msg = f"{folder.name}: " + traceback.format_exc().strip().splitlines()[-1]
        failures += problem_msg is not None
        print(problem_msg or f"{folder.name}: ok", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
