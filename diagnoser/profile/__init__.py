"""Rung 2, profiling: where each case stands against the device's roofline, and why.

`profile(subject)` dispatches on the backend: `nvidia` (runner timing + ceilings + Nsight Compute)
or `ascend` (torch_npu timing + msprof). The pieces are usable alone: `ncu` (command, raw-page
parser, launch alignment), `msprof` (operator summaries), `roofline` (the class rules), `driver`
(the program the profilers run).
"""
from __future__ import annotations


def profile(solution: str, problem: str | None, backend: str, *, script: bool = False, use_ncu: bool = True) -> dict:
    if backend == "cuda":
        from diagnoser.profile import nvidia

        if script:
            return nvidia.profile_script(solution, use_ncu=use_ncu)
        return nvidia.profile(solution, problem, use_ncu=use_ncu)
    if backend == "npu":
        from diagnoser.subject import RungUnavailable
        from diagnoser.profile import ascend

        if script:
            raise RungUnavailable("profiling a script is implemented for cuda only")
        return ascend.profile(solution, problem, use_msprof=use_ncu)
    raise ValueError(f"backend {backend!r} has no device to profile")
