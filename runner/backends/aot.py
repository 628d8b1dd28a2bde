"""`aot`: compile-only backend for a target with no device attached.

It runs a solution's forward (or a script) on CPU tensors while intercepting every Triton launch
(`JITFunction.run`, and `Autotuner.run`; `heuristics` pass through to `run`), and compiles each
kernel for the target exactly as the JIT on that device would: the specialization comes from the
actual arguments through triton's own binder (`create_function_from_signature` with the target's
backend: 16-byte pointer alignment, integers divisible by 16, integers equal to 1, constexprs,
`do_not_specialize`), and `JITFunction._pack_args` turns it into the compiler's signature,
constexprs and attributes. So the IR is the IR the GPU would run.

An autotuned kernel cannot be timed here: every config that survives the kernel's
`early_config_prune` is compiled (a `perf_model` needs a device and is not consulted); the first one
is flagged `default` and is the only one counted as launched.

The kernels never execute, so outputs hold garbage and data-dependent control flow in a forward
sees garbage too. Tensors a solution creates with `device="cuda"` or moves with `.cuda()`/`.to("cuda")`
stay on the CPU while capturing, and large random inputs are allocated but never filled; small ones
are filled, seeded, so control flow that steers by them is the same every run (`cpu_stand_in`).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ladder.runner.capture import (CapturedKernel, LaunchInterceptor, cpu_stand_in, device_stand_in, fresh_compiles,
                                   jsonable, located_in, nvidia_record, run_target)
from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)

DEFAULT_TARGET = "sm90"


def parse_target(name: str) -> Any:
    """`sm90`, `sm_90a`, `cuda:90` -> GPUTarget("cuda", 90, 32)."""
    from triton.backends.compiler import GPUTarget

    match = re.fullmatch(r"(?:sm_?|cuda:)(\d+)a?", name.strip().lower())
    if not match:
        raise ValueError(f"unknown target {name!r}: use sm90 (H100/H200), sm80, sm100, ... or ascend")
    return GPUTarget("cuda", int(match.group(1)), 32)


def is_ascend(target: str) -> bool:
    return target.lower().startswith(("ascend", "npu"))


class AotCapture(LaunchInterceptor):
    """While active, Triton launches compile for `target` instead of running; records every kernel."""

    def __init__(self, target: Any) -> None:
        from triton.compiler.compiler import make_backend

        super().__init__()
        self.target = target
        self.backend = make_backend(target)
        self._binders: dict[int, Any] = {}
        self._key_caches: dict[int, dict] = {}
        self._compiled: dict[tuple[int, str], tuple[Any, CapturedKernel]] = {}
        self._configs: list[dict[str, Any]] = []

    # -- the JIT's path, with the target's backend instead of the active driver's ------------
    def _binder(self, jit_fn: Any) -> Any:
        from triton.runtime.jit import create_function_from_signature

        if id(jit_fn) not in self._binders:
            self._binders[id(jit_fn)] = create_function_from_signature(jit_fn.signature, jit_fn.params, self.backend)
            self._key_caches[id(jit_fn)] = {}
        return self._binders[id(jit_fn)]

    def compile_launch(self, jit_fn: Any, args: tuple, kwargs: dict, *, grid: Any, warmup: bool) -> Any:
        """What `JITFunction.run` does up to the launch: bind, specialize, compile (once per key)."""
        import triton
        from triton import knobs
        from triton.compiler import ASTSource
        from triton.runtime.jit import compute_cache_key

        kwargs["debug"] = kwargs.get("debug", jit_fn.debug) or knobs.runtime.debug
        kwargs["instrumentation_mode"] = knobs.compilation.instrumentation_mode
        for hook in jit_fn.pre_run_hooks:
            hook(*args, **kwargs)
        bound_args, specialization, options = self._binder(jit_fn)(*args, **kwargs)
        key = compute_cache_key(self._key_caches[id(jit_fn)], specialization, options)
        config = self._configs[-1] if self._configs else None
        entry = self._compiled.get((id(jit_fn), key))
        if entry is None:
            options, signature, constexprs, attrs = jit_fn._pack_args(self.backend, kwargs, bound_args,
                                                                      specialization, options)
            source = ASTSource(jit_fn, signature, constexprs, attrs)
            kernel = triton.compile(source, target=self.target, options=options.__dict__)
            if not located_in(kernel, jit_fn):
                with fresh_compiles():
                    kernel = triton.compile(source, target=self.target, options=options.__dict__)
            record = nvidia_record(kernel, jit_fn, backend="aot", signature=signature, constexprs=constexprs,
                                   attrs=attrs, config=config)
            entry = self._compiled[(id(jit_fn), key)] = (kernel, record)
            self._records.append(record)
        kernel, record = entry
        launched = not warmup and (config is None or config["default"])
        if launched:
            if callable(grid):
                grid = grid(bound_args)
            grid = [int(size) for size in grid]
            record.launches.append({"case": self.case, "grid": grid + [1] * (3 - len(grid))})
        return kernel

    def compile_configs(self, autotuner: Any, args: tuple, kwargs: dict) -> Any:
        """An autotuned launch: compile every config (none can be timed); the first is the default."""
        from triton.compiler.errors import CompileTimeAssertionFailure
        from triton.runtime.errors import OutOfResources, PTXASError

        autotuner.nargs = dict(zip(autotuner.arg_names, args))
        configs = autotuner.configs
        if len(configs) > 1 and autotuner.early_config_prune:
            configs = autotuner.early_config_prune(configs, autotuner.nargs, **kwargs)
        result = None
        for index, config in enumerate(configs):
            current = {**kwargs, **config.all_kwargs()}
            if config.pre_hook:
                config.pre_hook({**autotuner.nargs, **current})
            self._configs.append({"index": index, "of": len(configs), "default": index == 0,
                                  "kwargs": jsonable(config.kwargs), "num_warps": config.num_warps,
                                  "num_stages": config.num_stages, "num_ctas": config.num_ctas,
                                  "maxnreg": config.maxnreg})
            try:
                kernel = autotuner.fn.run(*args, **current)
            # The autotuner itself skips configs that fail this way (it times them as infinite).
            except (OutOfResources, CompileTimeAssertionFailure, PTXASError) as error:
                self._records.append(_failed_record(autotuner, self._configs[-1], error))
                kernel = None
            finally:
                self._configs.pop()
            result = kernel if index == 0 else result
        autotuner.nargs = None
        return result


def _failed_record(autotuner: Any, config: dict, error: Exception) -> CapturedKernel:
    base = autotuner.base_fn
    return CapturedKernel(name=base.__name__, function=f"{base.__module__}.{base.__qualname__}",
                          file=base.__code__.co_filename, line=base.__code__.co_firstlineno, backend="aot",
                          target="", signature={}, constexprs={}, attrs={}, metadata={}, stages={}, resources={},
                          config=config, error=f"{type(error).__name__}: {str(error).splitlines()[0]}")


def capture(solution_path: str | Path, problem_path: str | Path | None = None, case_index: int | None = None,
            target: str = DEFAULT_TARGET, argv: list[str] | None = None) -> list[CapturedKernel]:
    """Every kernel the forward (or script) would launch, compiled for `target`, with no device.

    `target` is an NVIDIA architecture (`sm90`, the default: H100/H200) or `ascend`
    (Triton-Ascend's stages, captured in its own Python environment: see runner.ascend_ir).
    """
    if is_ascend(target):
        from ladder.runner import ascend_ir

        return ascend_ir.capture(solution_path, problem_path, case_index, target=target, argv=argv)
    parsed = parse_target(target)
    with AotCapture(parsed) as session, device_stand_in(f"cuda:{parsed.arch}"), cpu_stand_in():
        run_target(solution_path, problem_path, case_index, device="cpu", on_case=session.set_case, argv=argv)
    return session.kernels()
