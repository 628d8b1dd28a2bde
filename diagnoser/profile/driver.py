"""The program Nsight Compute profiles: one warmed-up forward per case, bracketed for the profiler.

    python3 -m ladder.diagnoser.profile.driver JOBS.json LOG.jsonl

`JOBS.json` is a list of jobs: `{"solution": path, "problem": path, "cases": [0, 2] | null,
"device": "cuda" | "npu" | "cpu", "split": timing | null}` for a solution/problem pair, or
`{"script": path, "argv": [...]}` for any script that launches Triton kernels. Per case the driver
builds the inputs and warms the forward up unprofiled until it is in its steady state (compilation,
autotuning and first-touch effects happen there): it calls it until no autotuner benchmarks a config
any more and two calls in a row launch the same kernels, at most `MAX_WARMUP_CALLS` times. Then it
runs it once more between cudaProfilerStart and cudaProfilerStop, which is all ncu sees
(`--profile-from-start off`). The case's line says how many warm-up calls that took and how many
launches they made. A pair job with `split` profiles nothing: after the warm-up it records one more
forward by launch site and times each site by replay (`ladder.diagnoser.profile.split`).
A script job (`ladder.diagnoser.profile.script_job`) records the script's launch sites while it runs
unprofiled, then replays them: timed, or inside the profiler range for chosen sites.

Every Triton launch is logged by name through Triton's launch hook, one JSON line per case in
`LOG.jsonl` (written as it goes, so a crash still leaves the cases done so far): that is how the
rows of the profiler's table are mapped back to cases. On `npu` there is no profiler range (msprof
sees every launch), so the warm-up launches are logged too, under `warmup`. Runs on the GPU
machine: stdlib, torch, triton and the runner only.
"""
from __future__ import annotations

import contextlib
import json
import sys
import traceback
from pathlib import Path

from ladder.runner.capture.picks import as_timed
from ladder.runner.capture.tuning import AutotuneWatch

MAX_WARMUP_CALLS = 5


class LaunchLog:
    """Names of the Triton kernels launched while `recording` is on, in launch order; `tuning`
    counts those an autotuner made timing its configs (kept in `names` too: a profiler sees them)."""

    def __init__(self, autotune: AutotuneWatch | None = None) -> None:
        self.names: list[str] = []
        self.tuning = 0
        self.recording = False
        self.autotune = autotune

    def __call__(self, metadata) -> None:
        if self.recording:
            self.names.append(metadata.get()["name"])
            self.tuning += bool(self.autotune and self.autotune.tuning())

    def take(self) -> list[str]:
        names, self.names, self.tuning = self.names, [], 0
        return names


def warm_up(log: LaunchLog, run) -> dict:
    """Call `run()` until the forward is in its steady state: no autotuner benchmarked a config in
    the last call, and it launched the kernels the call before it did (at most MAX_WARMUP_CALLS).

    Returns the calls made, every launch they made in order (`names`, for a profiler that saw
    them), and how many of those were the autotuner's; `steady` is False when the limit came first.
    """
    names: list[str] = []
    previous, tuning, steady, calls = None, 0, False, 0
    for calls in range(1, MAX_WARMUP_CALLS + 1):
        log.take()
        log.recording = True
        try:
            run()
        finally:
            log.recording = False
        tuned = log.tuning
        launched = log.take()
        names += launched
        tuning += tuned
        if not tuned and previous is not None and launched == previous:
            steady = True
            break
        previous = launched
    return {"calls": calls, "names": names, "tuning_launches": tuning, "steady": steady}


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
    from ladder.runner.problem import load_problem, load_solution

    device = job.get("device", "cuda")
    problem = load_problem(job["problem"])
    # On a GPU, on the judge's kernels and autotuner choices (its autotuners are built at the import)
    with as_timed(job["solution"]) if device == "cuda" else contextlib.nullcontext():
        model_new = load_solution(job["solution"])
        run_cases(problem, model_new, job, log, emit, device)


def run_cases(problem, model_new, job: dict, log: LaunchLog, emit, device: str) -> None:
    """Each asked case: inputs built, the forward warmed up, then one forward inside the profiler range."""
    import torch

    indices = job.get("cases")
    for index in range(len(problem.cases)) if indices is None else indices:
        try:
            with problem.applied(problem.cases[index]):
                torch.manual_seed(index)
                init_inputs = _to_device(problem.get_init_inputs(), device)
                inputs = _to_device(problem.get_inputs(), device)
            model = model_new(*init_inputs).to(device)
            with torch.no_grad():
                warm = warm_up(log, lambda: model(*inputs))  # outside the profiled range
                steady = {"warmup_calls": warm["calls"], "warmup_launches": len(warm["names"]),
                          "autotuning_launches": warm["tuning_launches"], "steady": warm["steady"]}
                if job.get("split"):
                    emit({"case": index, "split": _split(lambda: model(*inputs), job["split"], device),
                          "steady_state": steady})
                    continue
                launches = profiled(log, lambda: model(*inputs), device)
            emit({"case": index, "launches": launches, "steady_state": steady,
                  **({"warmup": warm["names"]} if device != "cuda" else {})})
        except Exception as error:  # one bad case must not hide the others
            emit({"case": index, "launches": [], "error": _one_line(error)})


def _split(run, timing: dict, device: str) -> list[dict]:
    """One steady-state forward's launch sites, each timed by replay (no profiler range)."""
    from ladder.diagnoser.profile import script_job
    from ladder.runner.backends import select_backend

    backend = select_backend("cuda" if device == "cuda" else "interpret")
    backend.setup()
    return script_job.forward_sites(run, backend, timing)


def run_script(job: dict, log: LaunchLog, emit) -> None:
    from ladder.diagnoser.profile import script_job

    script_job.run(job, log, emit, profiled)


def _one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}".rstrip(": ")


def main(jobs_path: str, log_path: str) -> int:
    from triton import knobs

    jobs = json.loads(Path(jobs_path).read_text())
    log = LaunchLog(AutotuneWatch())
    log.autotune.install()
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
