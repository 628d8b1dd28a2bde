"""Which config does an autotuner keep inside a contestant, and how fast is it really?

    PYTHONPATH=. python3 bench/runner/autotune_choice.py --out $OUT/autotune-choice.json \\
        SOLUTION:PROBLEM:CASE [...]

For each autotuned solution and case (an index into the problem's ``get_cases()``), fresh
processes each build the model and call the forward once, so that its autotuners time every config:

- ``truth``: no guards; each config alone, timed the judge's way (idle device work before each
  start event, L2 flushed, events, median): what each config really costs;
- ``plain``: no guards, Triton's own benchmarker: what the autotuner keeps outside ladder;
- ``guarded``: the contestant's launch guards and torch recorders on, Triton's own benchmarker:
  what an autotuner kept inside the judge before ``ladder.runner.autotuning``;
- ``guarded+stall``: the same with ``backend.time_autotuners()``;
- ``sandboxed``: a real sandboxed contestant (``ladder.runner.contestant``, the sentinel armed) asked
  to load, build and check the case as the judge asks it, with Triton's own benchmarker put back:
  what an autotuner kept inside the judge before ``ladder.runner.autotuning``;
- ``sandboxed+stall``: the same contestant as it runs now.

The table gives each config's median per mode (ms), the config each mode kept, the true cost of
that config, and the host time of one forward after tuning (for the sandboxed modes, of a whole
checked call: the forward, its output written, the guards' checks). The processes share one Triton cache
(each config compiles once); autotuning results are never cached on disk here.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODES = ("truth", "plain", "guarded", "guarded+stall", "sandboxed", "sandboxed+stall")


def child(mode: str, solution: str, problem_path: str, case_index: int) -> dict:
    import torch
    from triton.runtime.autotuner import Autotuner

    from ladder.runner import autotuning, guards
    from ladder.runner.backends import select_backend
    from ladder.runner.guards import LaunchTracer
    from ladder.runner.inputs import make_init_inputs, make_inputs
    from ladder.runner.problem import load_problem, load_solution

    backend = select_backend("cuda")
    backend.setup()
    if mode.startswith("sandboxed"):
        return sandboxed(mode, backend, solution, problem_path, case_index)
    tracer = None
    if mode.startswith("guarded"):
        tracer = LaunchTracer(backend.launch_hook_fires, backend.current_stream)
        tracer.install()
    if mode == "guarded+stall":
        backend.time_autotuners()
    problem = load_problem(problem_path)
    case = problem.cases[case_index]
    model_class = load_solution(solution)
    device = backend.device()
    with problem.applied(case), device:
        model = model_class(*make_init_inputs(problem, case, 0, device)).to(device)
    inputs = make_inputs(problem, case, 1, device)
    module = sys.modules[model_class.__module__]
    tuners = {name: value for name, value in vars(module).items() if isinstance(value, Autotuner)}

    def forward():
        if tracer is None:
            return model(*inputs)
        with tracer.watch("forward"), guards.recording(tracer, {}, frozenset(), True):
            return model(*inputs)

    if mode == "truth":
        bench = autotuning.benchmarker(backend)
        costs = {}
        for name, tuner in tuners.items():
            configs = list(tuner.configs)
            for config in configs:
                tuner.configs, tuner.cache = [config], {}
                costs[f"{name} {config}"] = bench(forward, quantiles=(0.5,))
            tuner.configs, tuner.cache = configs, {}
        return {"timings": costs}
    forward()
    backend.synchronize()
    began = time.perf_counter()
    forward()
    host_ms = (time.perf_counter() - began) * 1e3
    backend.synchronize()
    return {"timings": {f"{name} {config}": timing[0] for name, tuner in tuners.items()
                        for config, timing in (tuner.configs_timings or {}).items()},
            "kept": [f"{name} {tuner.best_config}" for name, tuner in tuners.items()],
            "host_ms_after_tuning": host_ms}


def sandboxed(mode: str, backend, solution: str, problem_path: str, case_index: int) -> dict:
    """The case's first checked call in a sandboxed contestant, driven as the judge drives it."""
    from triton import runtime
    from triton.runtime.autotuner import Autotuner

    from ladder.runner.contestant import Contestant

    exchange = Path(tempfile.mkdtemp(prefix="autotune-choice-exchange-"))
    contestant = Contestant("candidate", sandboxed=True, backend=backend)
    replies = [contestant.handle({"op": "load", "problem": problem_path, "solution": solution,
                                  "exchange": str(exchange)})]
    if mode == "sandboxed":
        del runtime.driver.active.get_benchmarker  # Triton's own, as before ladder.runner.autotuning
    replies.append(contestant.handle({"op": "build", "case": case_index, "init_seed": 0}))
    began = time.perf_counter()
    replies.append(contestant.handle({"op": "check", "seed": 1, "output": str(exchange / "first.pt")}))
    first_call_s = time.perf_counter() - began
    began = time.perf_counter()
    replies.append(contestant.handle({"op": "check", "seed": 2, "output": str(exchange / "second.pt")}))
    host_ms = (time.perf_counter() - began) * 1e3
    failed = [reply for reply in replies if "error" in reply or "rejected" in reply or "failed" in reply]
    if failed:
        return {"error": json.dumps(failed[0])[:300]}
    module = sys.modules[contestant.model_class.__module__]
    tuners = {name: value for name, value in vars(module).items() if isinstance(value, Autotuner)}
    return {"timings": {f"{name} {config}": timing[0] for name, tuner in tuners.items()
                        for config, timing in (tuner.configs_timings or {}).items()},
            "kept": [f"{name} {tuner.best_config}" for name, tuner in tuners.items()],
            "host_ms_after_tuning": host_ms, "first_call_s": round(first_call_s, 2)}


def measure(target: str, cache: str) -> dict:
    solution, problem, case = target.rsplit(":", 2)
    result = {"solution": solution, "problem": problem, "case": int(case), "modes": {}}
    env = {**os.environ, "TRITON_CACHE_DIR": cache, "PYTHONPATH": str(ROOT)}
    env.pop("TRITON_CACHE_AUTOTUNING", None)
    for mode in MODES:
        began = time.monotonic()
        done = subprocess.run([sys.executable, __file__, "--child", mode, solution, problem, case],
                              capture_output=True, text=True, env=env, timeout=600)
        if done.returncode != 0:
            result["modes"][mode] = {"error": (done.stderr.strip().splitlines() or ["?"])[-1]}
        else:
            result["modes"][mode] = json.loads(done.stdout.strip().splitlines()[-1])
        result["modes"][mode]["wall_s"] = round(time.monotonic() - began, 1)
        print(f"[{target}] {mode}: {time.monotonic() - began:.1f} s", file=sys.stderr, flush=True)
    return result


def table(result: dict) -> str:
    modes = result["modes"]
    truth = modes.get("truth", {}).get("timings", {})
    lines = [f"{Path(result['solution']).parent.parent.name}/{Path(result['solution']).name} case {result['case']}",
             "config | " + " | ".join(MODES)]
    for config in truth:
        lines.append(f"{config} | " + " | ".join(
            f"{modes[m]['timings'][config]:.4f}" if config in modes[m].get("timings", {}) else "-" for m in MODES))
    for mode in MODES[1:]:
        if "error" in modes[mode]:
            lines.append(f"{mode}: {modes[mode]['error']}")
            continue
        kept = modes[mode]["kept"]
        costs = ", ".join(f"{truth[k]:.4f}" if k in truth else "?" for k in kept)
        lines.append(f"{mode} kept {kept}: truly {costs} ms "
                     f"(fastest config truly {min(truth.values()):.4f} ms); "
                     f"host time of a forward {modes[mode]['host_ms_after_tuning']:.3f} ms")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--child":
        print(json.dumps(child(argv[1], argv[2], argv[3], int(argv[4]))))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("targets", nargs="+", help="SOLUTION:PROBLEM:CASE")
    args = parser.parse_args(argv)
    results = []
    with tempfile.TemporaryDirectory(prefix="autotune-choice-") as cache:
        for target in args.targets:
            results.append(measure(target, cache))
            args.out.write_text(json.dumps(results, indent=1))
            print(table(results[-1]) + "\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
