"""Rung 2, profiling: where each case stands against the device's roofline, and why.

`profile(subject)` dispatches on the backend: `nvidia` (runner timing + ceilings + Nsight Compute)
or `ascend` (torch_npu timing + msprof); a script (no cases, no reference) is profiled by its launch
sites, each replayed and timed (`script`), on a GPU or, host-timed, under the interpreter. The pieces
are usable alone: `ncu` (command, raw-page parser, launch alignment), `msprof` (operator summaries),
`roofline` (the class rules), `driver` (the program the profilers run), `script_job` (its job
for a script) and `split` (a forward of several kernels, kernel by kernel).
"""
from __future__ import annotations


def profile(solution: str, problem: str | None, backend: str, *, script: bool = False, use_ncu: bool = True) -> dict:
    if script and backend in ("cuda", "interpret"):
        from ladder.diagnoser.profile import script as script_mode

        return script_mode.profile(solution, backend, use_ncu=use_ncu)
    if backend == "cuda":
        from ladder.diagnoser.profile import nvidia, split

        measured = nvidia.profile(solution, problem, use_ncu=use_ncu)
        split.attach_split(measured, solution, problem)
        return measured
    if backend == "npu":
        from ladder.diagnoser.profile import ascend
        from ladder.diagnoser.subject import RungUnavailable

        if script:
            raise RungUnavailable("profiling a script is implemented for cuda and the interpreter only")
        return ascend.profile(solution, problem, use_msprof=use_ncu)
    raise ValueError(f"backend {backend!r} has no device to profile")
