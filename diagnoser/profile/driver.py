"""The program Nsight Compute profiles: one warmed-up forward per case, bracketed for the profiler.

    python3 -m diagnoser.profile.driver JOBS.json LOG.jsonl

`JOBS.json` is a list of jobs: `{"solution": path, "problem": path, "cases": [0, 2] | null,
"device": "cuda" | "npu"}` for a solution/problem pair, or `{"script": path, "argv": [...]}` for any
script that launches Triton kernels. Per case the driver builds the inputs, runs the forward once
unprofiled (compilation, autotuning and first-touch effects happen there), then runs it once more
between cudaProfilerStart and cudaProfilerStop, which is all ncu sees (`--profile-from-start off`).
A script runs once, wholly inside the profiled range.

Every Triton launch is logged by name through Triton's launch hook, one JSON line per case in
`LOG.jsonl` (written as it goes, so a crash still leaves the cases done so far): that is how the
rows of the profiler's table are mapped back to cases. On `npu` there is no profiler range (msprof
sees every launch), so the warm-up launches are logged too, under `warmup`. Runs on the GPU
machine: stdlib, torch, triton and the runner only.
"""
from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path


class LaunchLog:
    """Names of the Triton kernels launched while `recording` is on, in launch order."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.recording = False

    def __call__(self, metadata) -> None:
        if self.recording:
            self.names.append(metadata.get()["name"])

    def take(self) -> list[str]:
        names, self.names = self.names, []
        return names


def _to_device(value, device):
    import torch

    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, (list, tuple)):
        return type(value)(_to_device(item, device) for item in value)
    return value


def profiled(log: LaunchLog, run, device: str = "cuda") -> list[str]:
    """Run `run()` inside the profiler range; the Triton launches it made, in order."""
    import torch

    module = getattr(torch, device)
    module.synchronize()
    log.take()
    log.recording = True
    if device == "cuda":
        torch.cuda.profiler.start()  # cudaProfilerStart
    try:
        run()
        module.synchronize()
    finally:
        if device == "cuda":
            torch.cuda.profiler.stop()
        log.recording = False
    return log.take()


def run_pair(job: dict, log: LaunchLog, emit) -> None:
    import torch

    from runner.problem import load_problem, load_solution

    device = job.get("device", "cuda")
    problem = load_problem(job["problem"])
    model_new = load_solution(job["solution"])
    indices = job.get("cases")
    for index in range(len(problem.cases)) if indices is None else indices:
        try:
            with problem.applied(problem.cases[index]):
                torch.manual_seed(index)
                init_inputs = _to_device(problem.get_init_inputs(), device)
                inputs = _to_device(problem.get_inputs(), device)
            model = model_new(*init_inputs).to(device)
            with torch.no_grad():
                log.recording = device != "cuda"
                model(*inputs)  # warm-up: compile and autotune outside the profiled range
                warmup = log.take()
                launches = profiled(log, lambda: model(*inputs), device)
            emit({"case": index, "launches": launches, **({"warmup": warmup} if warmup else {})})
        except Exception as error:  # one bad case must not hide the others
            emit({"case": index, "launches": [], "error": _one_line(error)})


def run_script(job: dict, log: LaunchLog, emit) -> None:
    from runner.capture import run_script as run

    try:
        launches = profiled(log, lambda: run(job["script"], job.get("argv") or []), job.get("device", "cuda"))
        emit({"case": None, "launches": launches})
    except Exception as error:
        emit({"case": None, "launches": log.take(), "error": _one_line(error)})


def _one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}".rstrip(": ")


def main(jobs_path: str, log_path: str) -> int:
    from triton import knobs

    jobs = json.loads(Path(jobs_path).read_text())
    log = LaunchLog()
    knobs.runtime.launch_enter_hook.add(log)
    with open(log_path, "a") as out:
        for number, job in enumerate(jobs):
            def emit(record, number=number):
                out.write(json.dumps({"job": number, **record}) + "\n")
                out.flush()
            emit({"case": "start"})  # so a crash inside this job can be blamed on it
            try:
                (run_script if "script" in job else run_pair)(job, log, emit)
            except Exception as error:
                emit({"case": "all", "launches": [], "error": _one_line(error)})
                traceback.print_exc()
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
