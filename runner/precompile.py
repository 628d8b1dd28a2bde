"""Compile every kernel a set of (solution, problem) pairs launches, in parallel, with no device.

Used before timed runs on a GPU machine (``ladder suite``, batched diagnosis, the optimization
loop's candidates): the runner's aot backend reproduces the JIT's specialization of each launch, so
the kernels land in Triton's on-disk cache under the key the JIT computes on the device, and the
timed run finds them there instead of compiling one at a time between timings on one core.
``python -m ladder.runner.precompile TARGET SOLUTION PROBLEM [...]`` is the per-process worker.
"""
from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)


def precompile(pairs: list[tuple[Path, Path]], target: str, jobs: int,
               timeout_s: float = 900.0) -> dict[str, Any]:
    """Compile every kernel that the (solution, problem) pairs launch on any case, in parallel.

    Run in ``jobs`` processes through the runner's aot backend before the timed run: the kernels land
    in Triton's on-disk cache under the key the JIT computes on the device, so the run finds them
    there instead of compiling the suite's hundred-odd specializations one at a time, between
    timings, on one core. Purely an accelerator: a kernel that fails here fails again, and is
    reported, in the run itself. Returns, per solution: how many kernels were compiled, the errors,
    the cases that launched a kernel and each kernel's shared memory.
    """
    started = time.monotonic()
    groups = [pairs[index::jobs] for index in range(min(jobs, len(pairs)))]
    processes = [subprocess.Popen([sys.executable, "-m", "ladder.runner.precompile", target,
                                   *(str(path) for pair in group for path in pair)],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
                 for group in groups]
    results: dict[str, Any] = {}
    deadline = time.monotonic() + timeout_s
    for process in processes:
        try:
            stdout, _ = process.communicate(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            stdout, _ = process.communicate()
        for line in stdout.splitlines():
            with contextlib.suppress(json.JSONDecodeError):
                entry = json.loads(line)
                results[entry.pop("solution")] = entry
    return {"target": target, "jobs": len(groups), "elapsed_s": round(time.monotonic() - started, 2),
            "solutions": results}


def compile_target(backend: Any) -> str | None:
    """``sm90`` for the CUDA device here (what its contestants compile for ahead of time), else None."""
    if backend.name != "cuda":
        return None
    import torch

    major, minor = torch.cuda.get_device_capability()
    return f"sm{major}{minor}"


def compile_kernels(solution: Path, problem: Path, target: str) -> list[Any]:
    """Every kernel ``solution`` launches on any case of ``problem``, compiled for ``target`` with no
    device, through the runner's aot backend (the JIT's own specialization of each launch).

    Compile only: the capture's description of each kernel for rung 3 (SASS through nvdisasm, a
    second ptxas run for the spill report) is left out; it costs more than the compile itself.
    """
    from ladder.runner.backends import aot
    from ladder.runner.capture import CapturedKernel

    def bare_record(kernel: Any, jit_fn: Any, *, config: dict | None = None, **_: Any) -> CapturedKernel:
        meta = kernel.metadata
        return CapturedKernel(name=kernel.name, function=f"{jit_fn.fn.__module__}.{jit_fn.fn.__qualname__}",
                              file=None, line=None, backend="aot", target=target, signature={}, constexprs={},
                              attrs={}, stages={}, resources={}, config=config,
                              metadata={"hash": meta.hash, "shared": meta.shared, "num_warps": meta.num_warps})

    describe, aot.nvidia_record = aot.nvidia_record, bare_record
    try:
        return aot.capture(solution, problem, target=target)
    finally:
        aot.nvidia_record = describe


def _compile_main(argv: list[str]) -> int:
    """``python -m ladder.runner.precompile TARGET SOLUTION PROBLEM [SOLUTION PROBLEM ...]`` (``precompile``)."""
    target, paths = argv[0], argv[1:]
    for solution, problem in zip(paths[::2], paths[1::2]):
        try:
            kernels = compile_kernels(Path(solution), Path(problem), target)
            entry = {"kernels": len(kernels), "errors": [f"{k.label}: {k.error}" for k in kernels if k.error],
                     "cases": sorted({launch["case"] for k in kernels for launch in k.launches}),
                     "shared_bytes": {k.label: k.metadata.get("shared") for k in kernels if not k.error}}
        except Exception as error:  # reported, never fatal: the run will meet the same error
            first = str(error).splitlines()[0] if str(error) else ""
            entry = {"kernels": 0, "errors": [f"{type(error).__name__}: {first}"]}
        print(json.dumps({"solution": solution, **entry}), flush=True)
    return 0


def device_target() -> str | None:
    """``sm90`` for the visible CUDA device (what the JIT compiles for), None without one."""
    import torch

    if not torch.cuda.is_available():
        return None
    major, minor = torch.cuda.get_device_capability()
    return f"sm{major}{minor}"


if __name__ == "__main__":
    sys.exit(_compile_main(sys.argv[1:]))
