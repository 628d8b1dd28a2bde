"""Triton-Ascend's IR (`ttir`, `ttadapter`) for a solution or script, on a machine with no NPU.

Triton-Ascend installs as the package `triton`, so it lives in its own Python environment and
runs as a subprocess of that interpreter: `LADDER_ASCEND_PYTHON`, or `.venv-ascend/bin/python` at
the repository root. Its backend compiles ttir -> ttadapter (the bundled triton-adapter-opt) ->
npubin (bishengir-compile, part of the CANN toolkit). Without CANN the last stage fails, after the
first two were written to the kernel cache; we collect them from there. With CANN the compile
succeeds and the stages come from the compiled kernel.

Parent side (`capture`): standard library only. Child side (`python -m ladder.runner.ascend_ir`): runs
the forward on CPU tensors with Triton-Ascend's JIT intercepted exactly like the `aot` backend
(its own binder and attribute descriptor give the specialization), device queries (core counts)
answered for the chip (`device_stand_in`), and writes CapturedKernel JSON.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from ladder.runner.capture import (
    CapturedKernel,
    LaunchInterceptor,
    jsonable,
    source_position,
)
from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)
from ladder.runner.paths import child_pythonpath

ENV_VAR = "LADDER_ASCEND_PYTHON"
REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CHIP = "Ascend910B3"
TIMEOUT_S = 600


class AscendUnavailable(RuntimeError):
    """No Triton-Ascend environment to run (the message says how to provide one)."""


DEFAULT_ENV = REPO_ROOT / ".venv-ascend"


def ascend_python() -> str | None:
    """The interpreter of the Triton-Ascend environment, if one is configured or present."""
    configured = os.environ.get(ENV_VAR)
    if configured:
        return configured if Path(configured).exists() else None
    local = DEFAULT_ENV / "bin" / "python"
    return str(local) if local.exists() else None


def missing_environment() -> str:
    """Why there is no Triton-Ascend environment to run, and how to make one (one line)."""
    configured = os.environ.get(ENV_VAR)
    if configured:
        return f"{ENV_VAR}={configured} does not exist: run `ladder setup ascend`, or point {ENV_VAR} at the python of one"
    return (f"no Triton-Ascend environment (looked for {DEFAULT_ENV}): run `ladder setup ascend` to create it, "
            f"or set {ENV_VAR} to the python of an existing one")


def chip_of(target: str) -> str:
    """`ascend` -> the default chip; `npu:Ascend910B3` / `Ascend910B3` -> that chip."""
    name = target.split(":", 1)[1] if ":" in target else target
    return DEFAULT_CHIP if name.lower() in ("ascend", "npu") else name


def capture(solution_path: str | Path, problem_path: str | Path | None = None, case_index: int | None = None,
            target: str = "ascend", argv: list[str] | None = None, python: str | None = None) -> list[CapturedKernel]:
    """Every kernel the forward (or script) launches, as Triton-Ascend's ttir and ttadapter
    (compiled by `python`, by default the configured environment's)."""
    python = python or ascend_python()
    if python is None:
        raise AscendUnavailable(missing_environment())
    with tempfile.TemporaryDirectory(prefix="ladder-ascend-") as scratch:
        out = Path(scratch) / "kernels.json"
        command = [python, "-m", "ladder.runner.ascend_ir", "--solution", str(Path(solution_path).resolve()),
                   "--target", chip_of(target), "--out", str(out)]
        if problem_path is not None:
            command += ["--problem", str(Path(problem_path).resolve())]
        if case_index is not None:
            command += ["--case", str(case_index)]
        command += ["--", *(argv or [])]
        env = {**os.environ, "PYTHONPATH": child_pythonpath(os.environ.get("PYTHONPATH")),
               "TRITON_CACHE_DIR": str(Path(scratch) / "cache"), "TRITON_DISABLE_LINE_INFO": "0",
               "TRITON_ALWAYS_COMPILE": "1"}
        done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=REPO_ROOT, timeout=TIMEOUT_S)
        if done.returncode != 0 or not out.exists():
            lines = [line for line in (done.stderr or done.stdout).strip().splitlines() if line.strip()]
            raise RuntimeError(f"Triton-Ascend capture failed: {lines[-1] if lines else f'exit {done.returncode}'}")
        return [CapturedKernel.from_dict(item) for item in json.loads(out.read_text())]


# ---------------------------------------------------------------------------------------------
# Child side: runs inside the Triton-Ascend environment.
# ---------------------------------------------------------------------------------------------

_CACHE_DIR = re.compile(r"compiled kernel cache is in (\S+)")


class AscendCapture(LaunchInterceptor):
    """While active, Triton-Ascend launches compile for the NPU target instead of running."""

    def __init__(self, chip: str) -> None:
        from triton.backends.compiler import GPUTarget
        from triton.compiler.compiler import make_backend

        super().__init__()
        self.target = GPUTarget("npu", chip, 0)
        self.backend = make_backend(self.target)
        self._compiled: dict[tuple[int, str], CapturedKernel] = {}
        self._configs: list[dict[str, Any]] = []

    def compile_launch(self, jit_fn: Any, args: tuple, kwargs: dict, *, grid: Any, warmup: bool) -> None:
        """Triton-Ascend 3.2's `JITFunction.run` up to the launch: bind, specialize, compile once per key."""
        kwargs["debug"] = kwargs.get("debug", False) or os.environ.get("TRITON_DEBUG", "0") == "1"
        for hook in jit_fn.pre_run_hooks:
            hook(*args, **kwargs)
        if jit_fn.binder is None:
            jit_fn.create_binder(self.backend)
        if getattr(jit_fn, "bishengir_option", None):
            kwargs.update(jit_fn.bishengir_option)
        bound_args, sig_and_spec, constexpr_vals, _, excess_kwargs = jit_fn.binder(*args, **kwargs)
        key = "".join(sig_and_spec) + str((constexpr_vals, excess_kwargs))
        config = self._configs[-1] if self._configs else None
        record = self._compiled.get((id(jit_fn), key))
        if record is None:
            record = self._compile(jit_fn, bound_args, sig_and_spec, kwargs, config)
            self._compiled[(id(jit_fn), key)] = record
            self._records.append(record)
        if not warmup and (config is None or config["default"]):
            if callable(grid):
                grid = grid(bound_args)
            grid = [int(size) for size in grid]
            record.launches.append({"case": self.case, "grid": grid + [1] * (3 - len(grid))})

    def _compile(self, jit_fn: Any, bound_args: dict, sig_and_spec: list, kwargs: dict,
                 config: dict | None) -> CapturedKernel:
        import triton
        from triton.compiler import ASTSource
        from triton.compiler.errors import MLIRCompilationError

        options = self.backend.parse_options(kwargs)
        names = [jit_fn.params[i].name for i in jit_fn.non_constexpr_indices]
        signature = {name: ("*i8" if kind == "none" else kind) for name, kind in zip(names, sig_and_spec)}
        values = tuple(bound_args.values())
        attrs = self.backend.get_attrs_descriptor(jit_fn.params, values)
        constant_params = attrs.get_constants()
        constants = {param.name: value for value, param in zip(values, jit_fn.params)
                     if param.is_constexpr or param.num in constant_params or value is None}
        source = ASTSource(jit_fn, signature, constants, attrs)
        stages, error = {}, None
        try:
            kernel = triton.compile(source, target=self.target, options=options.__dict__)
            stages = {stage: kernel.asm[stage] for stage in ("ttir", "ttadapter") if stage in kernel.asm}
        except MLIRCompilationError as failure:
            found = _CACHE_DIR.search(str(failure))
            folder = Path(found.group(1)) if found else None
            name = source.name[:150]
            for stage in ("ttir", "ttadapter"):
                path = folder / f"{name}.{stage}" if folder else None
                if path is not None and path.exists():
                    stages[stage] = path.read_text()
            if failure.stage_name != "ConvertLinalgRToBinary" or "ttadapter" not in stages:
                error = f"{failure.stage_name}: {_first_error_line(str(failure))}"
        file, line = source_position(jit_fn)
        mix_mode = re.search(r'mix_mode = "(\w+)"', stages.get("ttadapter", ""))
        return CapturedKernel(
            name=jit_fn.__name__, function=f"{jit_fn.fn.__module__}.{jit_fn.fn.__qualname__}",
            file=file, line=line, backend="ascend",
            target=f"npu:{self.target.arch}", signature=signature,
            constexprs={name: jsonable(value) for name, value in constants.items()},
            attrs=_named_attrs(jit_fn, attrs),
            metadata={"name": jit_fn.__name__, "hash": source.hash(), "num_warps": options.num_warps,
                      "num_stages": options.num_stages, "mix_mode": mix_mode.group(1) if mix_mode else None,
                      **{key: jsonable(value) for key, value in options.__dict__.items()
                         if key in ("multibuffer", "compile_mode", "enable_auto_bind_sub_block")}},
            stages=stages, resources={}, config=config, error=error)

    def compile_configs(self, autotuner: Any, args: tuple, kwargs: dict) -> None:
        """An autotuned launch: compile every config; the first is the default."""
        autotuner.nargs = dict(zip(autotuner.arg_names, args))
        configs = autotuner.configs
        if len(configs) > 1 and getattr(autotuner, "early_config_prune", None):
            configs = autotuner.early_config_prune(configs, autotuner.nargs, **kwargs)
        for index, config in enumerate(configs):
            self._configs.append({"index": index, "of": len(configs), "default": index == 0,
                                  "kwargs": jsonable(config.kwargs), "num_warps": config.num_warps,
                                  "num_stages": config.num_stages})
            try:
                autotuner.fn.run(*args, **kwargs, **config.all_kwargs())
            finally:
                self._configs.pop()
        autotuner.nargs = None


def _named_attrs(jit_fn: Any, descriptor: Any) -> dict[str, list]:
    """Triton 3.2's AttrsDescriptor ({property: [argument index, ...]}) keyed by argument name."""
    values = {"tt.divisibility": 16, "tt.equal_to": 1}
    named: dict[str, list] = {}
    for prop, indices in descriptor.to_dict().get("arg_properties", {}).items():
        for index in indices:
            named.setdefault(jit_fn.params[index].name, []).append([prop, values.get(prop, True)])
    return named


def _first_error_line(message: str) -> str:
    lines = [line.strip() for line in message.splitlines()
             if line.strip() and not line.startswith("///") and "encounters error" not in line]
    return lines[0] if lines else "compile failed"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--solution", required=True)
    parser.add_argument("--problem")
    parser.add_argument("--case", type=int)
    parser.add_argument("--target", default=DEFAULT_CHIP)
    parser.add_argument("--out", required=True)
    parser.add_argument("script_args", nargs="*")
    options = parser.parse_args(argv)

    from ladder.runner.capture import (
        cpu_stand_in,
        device_stand_in,
        run_target,
        torch_npu_stand_in,
    )

    with AscendCapture(options.target) as session, torch_npu_stand_in(), device_stand_in(f"npu:{options.target}"), \
            cpu_stand_in():
        run_target(options.solution, options.problem, options.case, device="cpu", on_case=session.set_case,
                   argv=options.script_args)
    Path(options.out).write_text(json.dumps([kernel.to_dict() for kernel in session.kernels()]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
