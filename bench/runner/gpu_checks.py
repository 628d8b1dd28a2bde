"""Does the runner tell the truth on this GPU? One run, each part independent, results under $OUT.

    PYTHONPATH=. python3 bench/runner/gpu_checks.py        # from the repository root; $OUT or ./out

Parts (a failing part records its error; the others still run and report):

1. ceilings: measured copy bandwidth and dense matmul throughput (bf16, fp16, tf32, fp32), saved to
   the per-device cache that ``ladder bench`` then uses;
2. bandwidth: a memory-bound Triton kernel timed by the harness, as % of the measured copy ceiling;
3. repeatability: that kernel timed twice in one run; the two medians must differ by < 2 %;
4. ncu: harness median vs Nsight Compute's ``gpu__time_duration`` (``--clock-control none``, caches
   flushed like the harness) on an elementwise, a softmax and a matmul kernel: within 5 %;
5. bench: ``ladder bench --backend cuda`` on fixture pairs (exit status, table), the matmul fixture
   under tf32, a softmax pair with realistic sizes, a baseline timed against itself;
6. guards: the adversarial fixtures with static rules off, so the runtime guards alone must reject
   them on the GPU (side stream, cache, torch ops, unwritten output, threads), and an illegal memory
   access that must come back as a structured crash.
"""
from __future__ import annotations

import csv
import io
import json
import os
import statistics
import subprocess
import sys
import time
import traceback
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY))

OUT = Path(os.environ.get("OUT") or REPOSITORY / "out")
ADD = REPOSITORY / "tests" / "runner" / "fixtures" / "add"
MATMUL = REPOSITORY / "tests" / "runner" / "fixtures" / "matmul"
SOFTMAX = REPOSITORY / "bench" / "runner" / "pairs" / "softmax"
NCU_LAUNCHES = 5


def main() -> int:
    if "--ncu-target" in sys.argv:
        return ncu_target()
    OUT.mkdir(parents=True, exist_ok=True)
    results: dict = {"started": time.strftime("%Y-%m-%dT%H:%M:%S")}
    for name, part in (("ceilings", part_ceilings), ("bandwidth", part_bandwidth),
                       ("repeatability", part_repeatability), ("ncu", part_ncu),
                       ("bench", part_bench), ("guards", part_guards)):
        started = time.time()
        print(f"== {name}", flush=True)
        try:
            results[name] = part(results)
        except Exception as error:
            results[name] = {"error": f"{type(error).__name__}: {error}", "traceback": traceback.format_exc()}
        results[name]["seconds"] = round(time.time() - started, 1)
        (OUT / "gpu_checks.json").write_text(json.dumps(results, indent=2, default=str))
    print_summary(results)
    return 0


# ------------------------------------------------------------------------------------------ harness


def harness():
    """The runner's own timing loop on the cuda backend, as ``ladder bench`` uses it."""
    from ladder.runner.backends import select_backend
    from ladder.runner.guards import LaunchTracer

    backend = select_backend("cuda")
    tracer = LaunchTracer(hook_fires=True, current_stream=backend.current_stream)
    tracer.install()
    return backend, tracer


def time_workloads(names: list[str], reps: int | None = None, repeat: int = 1) -> dict[str, list[dict]]:
    """Harness summaries (ms) per workload, each timed ``repeat`` times in a row."""
    import torch

    from ladder.runner.compare import Verdict
    from ladder.runner.timing import Contestant, Settings, measure
    from bench.runner.kernels import workloads

    backend, tracer = harness()
    table = workloads()
    summaries: dict[str, list[dict]] = {}
    try:
        for name in names:
            function, make_inputs, _, _, _ = table[name]
            contestant = Contestant(name, lambda inputs, f=function: f(*inputs), guarded=True, verify=False)
            for _ in range(repeat):
                measured = measure([contestant], make_inputs, backend, tracer, lambda i, o: Verdict(True),
                                   Settings(reps=reps, min_reps=50, max_reps=300, budget_s=1.0), seed=0)
                result = measured[name]
                if result.violation:
                    raise RuntimeError(f"{name}: {result.violation}")
                summaries.setdefault(name, []).append(result.summary())
            torch.cuda.empty_cache()
    finally:
        tracer.uninstall()
    return summaries


# ------------------------------------------------------------------------------------------ parts


def part_ceilings(results: dict) -> dict:
    from ladder.runner.roofline import measure_ceilings, save_ceilings

    measured = measure_ceilings("cuda")
    measured["cache_file"] = str(save_ceilings(measured))
    return measured


def part_bandwidth(results: dict) -> dict:
    from bench.runner.kernels import workloads

    summary = time_workloads(["elementwise"])["elementwise"][0]
    moved = workloads()["elementwise"][2]
    achieved = moved / (summary["median"] / 1e3) / 1e9
    bandwidth = results.get("ceilings", {}).get("bandwidth")
    ceiling = bandwidth / 1e9 if bandwidth else None
    return {"kernel": "scale_kernel, 2^27 fp32 in + out (1 GiB moved)", "time_ms": summary,
            "achieved_gbps": achieved, "copy_ceiling_gbps": ceiling,
            "pct_of_copy_ceiling": 100 * achieved / ceiling if ceiling else None}


def part_repeatability(results: dict) -> dict:
    first, second = time_workloads(["elementwise"], repeat=2)["elementwise"]
    difference = abs(first["median"] - second["median"]) / min(first["median"], second["median"])
    return {"first_ms": first, "second_ms": second, "median_difference_pct": 100 * difference,
            "pass": difference < 0.02}


def part_ncu(results: dict) -> dict:
    names = ["elementwise", "softmax", "matmul"]
    from bench.runner.kernels import workloads

    kernel_names = {name: workloads()[name][4] for name in names}
    command = ["ncu", "--clock-control", "none", "--cache-control", "all", "--metrics",
               "gpu__time_duration.sum", "--csv", "--page", "raw",
               "-k", "regex:^(" + "|".join(kernel_names.values()) + ")$",
               sys.executable, str(Path(__file__).resolve()), "--ncu-target"]
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPOSITORY),
                                                                            os.environ.get("PYTHONPATH")])))
    completed = subprocess.run(command, capture_output=True, text=True, timeout=240, env=environment,
                               cwd=REPOSITORY)
    (OUT / "ncu_stdout.csv").write_text(completed.stdout)
    (OUT / "ncu_stderr.txt").write_text(completed.stderr)
    durations = parse_ncu_durations(completed.stdout)
    if not durations:
        raise RuntimeError(f"ncu returned {completed.returncode} with no durations: "
                           f"{(completed.stderr or completed.stdout)[-500:]}")
    harness_times = time_workloads(names)
    kernels = {}
    for name in names:
        ncu_ms = durations.get(kernel_names[name], [])
        harness_ms = harness_times[name][0]["median"]
        ncu_median = statistics.median(ncu_ms) if ncu_ms else None
        difference = abs(harness_ms - ncu_median) / ncu_median if ncu_median else None
        kernels[name] = {"kernel": kernel_names[name], "harness_median_ms": harness_ms,
                         "harness": harness_times[name][0], "ncu_ms": ncu_ms, "ncu_median_ms": ncu_median,
                         "difference_pct": 100 * difference if difference is not None else None,
                         "pass": difference is not None and difference < 0.05}
    return {"command": " ".join(command), "kernels": kernels}


def part_bench(results: dict) -> dict:
    from ladder.runner.bench import bench_pair
    from ladder.diagnoser.cli.bench import render

    records = {}
    cli = subprocess.run([sys.executable, "-m", "ladder.diagnoser", "bench", str(ADD / "solution.py"), "--problem",
                          str(ADD / "problem.py"), "--backend", "cuda", "--json", "--torch-compile"],
                         capture_output=True, text=True, timeout=600, cwd=REPOSITORY,
                         env=dict(os.environ, PYTHONPATH=str(REPOSITORY)))
    cli_record = json.loads(cli.stdout) if cli.stdout.strip().startswith("{") else None
    records["cli_add"] = {"exit_status": cli.returncode, "record": cli_record,
                          "stderr_tail": cli.stderr[-2000:]}
    if cli_record:
        print(render(cli_record), flush=True)
    for label, solution, problem, kwargs in (
            ("matmul_tf32", MATMUL / "solution.py", MATMUL / "problem.py", {}),
            ("softmax_pair", SOFTMAX / "solution.py", SOFTMAX / "problem.py", {}),
            ("baseline_vs_itself", SOFTMAX / "solution.py", SOFTMAX / "problem.py",
             {"baseline": SOFTMAX / "solution.py", "cases": [0]})):
        record = bench_pair(solution, problem, backend="cuda", timeout=600, **kwargs)
        records[label] = record
        print(render(record), flush=True)
    (OUT / "bench_records.json").write_text(json.dumps(records, indent=2, default=str))
    summary = {}
    for label, entry in records.items():
        record = entry["record"] if label == "cli_add" else entry
        summary[label] = {
            "ok": bool(record and record["ok"]) and entry.get("exit_status", 0) == 0,
            "exit_status": entry.get("exit_status"),
            "cases": [{key: case.get(key) for key in CASE_KEYS} for case in record["cases"]] if record else [],
        }
    return summary


CASE_KEYS = ("label", "correct", "reason", "time_ms", "reference_ms", "torch_compile_ms", "speedup",
             "speedup_vs_baseline", "gbps", "tflops", "roofline_pct", "max_rel_err", "rtol")


# What each adversarial fixture must be rejected for by the runtime guards alone (static rules off).
EXPECTED_RUNTIME = {
    "side_stream": "side stream",
    "cached_by_shape": "output cached across calls",
    "torch_only": "forward calls torch compute ops",
    "try_fallback": "forward calls torch compute ops",
    "returns_other_buffer": "which no Triton kernel wrote",
    "thread_launch": "another thread",
    "partial_write": "never written",
    "wrong_values": "exceeds tolerance",
    "nan_output": "NaN/Inf never pass",
    "solution": None,
}


def part_guards(results: dict) -> dict:
    from ladder.runner.bench import bench, bench_pair

    result = bench(ADD / "problem.py", {name: ADD / f"{name}.py" for name in EXPECTED_RUNTIME},
                   backend="cuda", static_checks=False, seeds=2, timeout=600)
    outcomes = {}
    for name, expected in EXPECTED_RUNTIME.items():
        report = result["solutions"][name]
        reason = (report["rejected"] or {}).get("reason") or next(
            (case.get("reason") for case in report["cases"] if not case["correct"]), None)
        passed = report["ok"] if expected is None else (not report["ok"] and expected in (reason or ""))
        outcomes[name] = {"ok": report["ok"], "reason": reason, "expected": expected, "pass": passed}
    crash = bench_pair(ADD / "out_of_bounds.py", ADD / "problem.py", backend="cuda", timeout=300, seeds=1)
    crash_reason = (crash["rejected"] or {}).get("reason", "")
    outcomes["out_of_bounds"] = {"ok": crash["ok"], "reason": crash_reason, "expected": "illegal memory access",
                                 "pass": not crash["ok"] and "illegal memory access" in crash_reason.lower()}
    (OUT / "guards_records.json").write_text(json.dumps({"bench": result, "crash": crash}, indent=2, default=str))
    return {"outcomes": outcomes, "pass": all(outcome["pass"] for outcome in outcomes.values())}


# ------------------------------------------------------------------------------------------ ncu


def ncu_target() -> int:
    """Run under ncu: launch each workload a few times (after one warm-up compile)."""
    import torch

    from bench.runner.kernels import workloads

    for name, (function, make_inputs, _, _, _) in workloads().items():
        inputs = make_inputs(0)
        for _ in range(NCU_LAUNCHES + 1):
            function(*inputs)
        torch.cuda.synchronize()
        del inputs
        torch.cuda.empty_cache()
    return 0


def parse_ncu_durations(text: str) -> dict[str, list[float]]:
    """Kernel name -> gpu__time_duration in ms, from ``ncu --csv`` (raw or details page)."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        return {}
    rows = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    header = rows[0]
    durations: dict[str, list[float]] = {}
    name_column = header.index("Kernel Name")
    if "gpu__time_duration.sum" in header:  # raw page: one column per metric, a units row first
        column = header.index("gpu__time_duration.sum")
        unit = rows[1][column] if len(rows) > 1 and not rows[1][0] else "nsecond"
        for row in rows[1:]:
            if row and row[0] and len(row) > column:
                durations.setdefault(row[name_column], []).append(to_ms(row[column], unit))
    else:  # details page: one row per metric
        metric, unit_column, value = (header.index(h) for h in ("Metric Name", "Metric Unit", "Metric Value"))
        for row in rows[1:]:
            if len(row) > value and row[metric] == "gpu__time_duration.sum":
                durations.setdefault(row[name_column], []).append(to_ms(row[value], row[unit_column]))
    return durations


def to_ms(value: str, unit: str) -> float:
    scale = {"nsecond": 1e-6, "ns": 1e-6, "usecond": 1e-3, "us": 1e-3, "msecond": 1.0, "ms": 1.0,
             "second": 1e3, "s": 1e3}[unit.strip()]
    return float(value.replace(",", "")) * scale


# ------------------------------------------------------------------------------------------ summary


def print_summary(results: dict) -> None:
    rows = [("check", "value", "target", "pass")]

    def add(check, value, target="", passed=""):
        rows.append((check, value, target, {True: "yes", False: "NO", None: ""}.get(passed, str(passed))))

    for name in ("ceilings", "bandwidth", "repeatability", "ncu", "bench", "guards"):
        if "error" in results.get(name, {}):
            add(name, "ERROR: " + results[name]["error"][:80], "", False)
    ceilings = results.get("ceilings", {})
    if "bandwidth" in ceilings:
        add("copy ceiling", f"{ceilings['bandwidth'] / 1e9:.0f} GB/s", "~4200-4300")
        for key, value in ceilings["flops"].items():
            add(f"{key} matmul ceiling", f"{value / 1e12:.0f} TFLOP/s")
    bandwidth = results.get("bandwidth", {})
    if bandwidth.get("achieved_gbps"):
        pct = bandwidth.get("pct_of_copy_ceiling")
        add("elementwise kernel bandwidth", f"{bandwidth['achieved_gbps']:.0f} GB/s"
            + (f" ({pct:.1f}% of copy)" if pct else ""))
    repeat = results.get("repeatability", {})
    if "median_difference_pct" in repeat:
        add("same kernel timed twice", f"{repeat['first_ms']['median']:.4f} vs {repeat['second_ms']['median']:.4f} ms "
            f"({repeat['median_difference_pct']:.2f}%)", "< 2%", repeat["pass"])
    for name, kernel in results.get("ncu", {}).get("kernels", {}).items():
        if kernel.get("ncu_median_ms"):
            add(f"harness vs ncu: {name}", f"{kernel['harness_median_ms']:.4f} vs {kernel['ncu_median_ms']:.4f} ms "
                f"({kernel['difference_pct']:.2f}%)", "< 5%", kernel["pass"])
    for label, record in results.get("bench", {}).items():
        if isinstance(record, dict) and "ok" in record:
            status = f"exit {record['exit_status']}, " if record.get("exit_status") is not None else ""
            correct = sum(1 for case in record["cases"] if case["correct"])
            speedups = ", ".join(f"{case['speedup']:.2f}x" for case in record["cases"] if case.get("speedup"))
            add(f"ladder bench: {label}", f"{status}{correct}/{len(record['cases'])} correct"
                + (f"; speedup {speedups}" if speedups else ""), "all correct", record["ok"])
    for name, outcome in results.get("guards", {}).get("outcomes", {}).items():
        add(f"guard: {name}", (outcome["reason"] or "accepted")[:70], outcome["expected"] or "accepted",
            outcome["pass"])
    widths = [max(len(str(row[i])) for row in rows) for i in range(4)]
    print()
    for position, row in enumerate(rows):
        print("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths)).rstrip())
        if position == 0:
            print("  ".join("-" * width for width in widths))
    print(f"\ndetails: {OUT / 'gpu_checks.json'}")


if __name__ == "__main__":
    sys.exit(main())
