"""How `ladder diagnose` ends on the GPU: the CPU tests' subjects again, with a device and rung 2.

    PYTHONPATH=. python3 bench/ladder/cli_endings_gpu.py        # from the repository root; $OUT or ./out

Every rung runs in a process of its own under its time limit; on the H200 that includes rung 2
(events, Nsight Compute) and rung 3 through the JIT. Each part runs `ladder diagnose` as a user
does and checks its exit status and its standard output:

- noisy: a script printing to stdout (Python and descriptor 1) under `--json`: JSON, exit 0;
- no_kernel: plain PyTorch: exit 3, "launched no Triton kernel", never a clean report;
- hanging: a compile that never ends (rungs 2 and 3 both compile it), `--rung-timeout 2=30 3=30`:
  exit 3, a rung marked timed out, rung 1 kept in the report, about a minute in all;
- softmax: a suite kernel pair, `--rungs 1-3`: exit 0, rung 2 ran, seconds per rung (what the
  process of its own costs each rung).

Each part writes $OUT/cli-endings/<part>.json as it finishes, and a part already written is not run
again (delete the file to rerun it); the summary goes to $OUT/cli-endings/summary.json and is
printed, one line per part, `ok` or what differed. Needs only torch, triton and the repository.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "diagnoser" / "cli" / "data"
OUT = Path(os.environ.get("OUT") or REPO / "out") / "cli-endings"
SOFTMAX = REPO / "kernels" / "level1" / "23_softmax"

PARTS = {
    "noisy": ([str(DATA / "noisy_script.py"), "--rungs", "1-3", "--json"], 0),
    "no_kernel": ([str(DATA / "no_kernel.py"), "--json"], 3),
    "hanging": ([str(DATA / "hanging_compile.py"), "--rungs", "1-3", "--rung-timeout", "2=30",
                 "--rung-timeout", "3=30", "--json"], 3),
    "softmax": ([str(SOFTMAX / "solution.py"), "--problem", str(SOFTMAX / "problem.py"), "--rungs", "1-3",
                 "--json"], 0),
}


def diagnose(args: list[str]) -> dict:
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "ladder.diagnoser", "diagnose", *args, "--backend", "cuda"], cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=580,
                          check=False)
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        report = None
    return {"exit": done.returncode, "seconds": round(time.monotonic() - started, 1), "report": report,
            "stdout_head": done.stdout[:400], "stderr_tail": done.stderr.strip().splitlines()[-8:]}


def verdict(name: str, result: dict, status: int) -> str:
    report = result["report"]
    if report is None:
        return f"stdout is not JSON: {result['stdout_head']!r}"
    if result["exit"] != status:
        return f"exit {result['exit']}, expected {status}: {result['stderr_tail'][-1:]}"
    rungs = {r["rung"]: r for r in report.get("rungs", [])}
    if name == "softmax" and not rungs.get(2, {}).get("ran"):
        return f"rung 2 did not run: {rungs.get(2, {}).get('why')}"
    if name == "no_kernel" and "launched no Triton kernel" not in (report.get("error") or ""):
        return f"error is {report.get('error')!r}"
    if name == "hanging" and not any(r.get("timed_out") for r in rungs.values()):
        return f"no rung timed out: {report.get('error')!r}"
    return "ok"


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    summary = {}
    for name, (args, status) in PARTS.items():
        path = OUT / f"{name}.json"
        if path.exists():
            result = json.loads(path.read_text())
        else:
            result = diagnose(args)
            path.write_text(json.dumps(result, indent=1) + "\n")
        rungs = (result["report"] or {}).get("rungs", [])
        summary[name] = {"verdict": verdict(name, result, status), "exit": result["exit"],
                         "seconds": result["seconds"], "rung_seconds": {r["rung"]: r["seconds"] for r in rungs}}
        print(f"{name:10s} {summary[name]['verdict']}  (exit {result['exit']}, {result['seconds']} s, "
              f"per rung {summary[name]['rung_seconds']})", flush=True)
    (OUT / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    return 0 if all(part["verdict"] == "ok" for part in summary.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
