"""Capture every Triton kernel a forward (or any Python script) compiles and launches.

A `CapturedKernel` is one compiled specialization of one `@triton.jit` function: its IR at every
stage (TTIR, TTGIR, LLVM IR, PTX, SASS as text), the specialization it was compiled for, its
compile metadata, its resource usage, and the grids it was launched with, per input case. It is a
plain JSON-serialisable record so that rung 3 can read kernels captured on another machine.

Two ways to fill it:
- on a GPU, from the JIT itself, through `triton.knobs.runtime` hooks (`JitCapture`, `capture`);
- on a CPU, through the compile-only `aot` backend (`ladder.runner.backends.aot`), which reproduces the
  JIT's specialization from the actual arguments.
Both drive the same workload runner (`run_target`): a problem/solution pair case by case, or a
script. Imports nothing beyond torch, triton, the standard library and `ladder.runner.paths` (where
a solution's timed runs keep their kernels; it imports nothing of the runner).

=================  ===========================================================================
``record``         `CapturedKernel`, its JSON rendering, `save` and `load`
``nvidia``         a compiled NVIDIA kernel as a record: stages, SASS, resources
``workload``       what a capture runs: a problem/solution pair per case, or a script
``interceptor``    `LaunchInterceptor`, the base of the compile-only captures
``standins``       device stand-ins, so that a forward runs with no GPU for ahead-of-time capture
``labels``         one record per distinct compiled kernel, labelled by what differs
``jit``            capture through Triton's JIT hooks on a GPU
``picks``          a JIT capture's autotuners reuse the choices the solution's timed runs recorded
=================  ===========================================================================
"""
from __future__ import annotations

from ladder.runner.capture.interceptor import LaunchInterceptor
from ladder.runner.capture.jit import JitCapture, capture, fresh_compiles, located_in
from ladder.runner.capture.nvidia import nvidia_record
from ladder.runner.capture.record import STAGE_ORDER, CapturedKernel, jsonable, load, save, source_position
from ladder.runner.capture.standins import REAL_FILL_ELEMENTS, cpu_stand_in, device_stand_in, torch_npu_stand_in
from ladder.runner.capture.workload import is_script, resolve_problem, run_script, run_target

__all__ = [
    "STAGE_ORDER", "CapturedKernel", "JitCapture", "LaunchInterceptor", "REAL_FILL_ELEMENTS", "capture",
    "cpu_stand_in", "device_stand_in", "fresh_compiles", "is_script", "jsonable", "load", "located_in",
    "nvidia_record", "resolve_problem", "run_script", "run_target", "save", "source_position", "torch_npu_stand_in",
]
