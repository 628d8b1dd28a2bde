"""Run every script of the real-kernel set once on the CPU, under Triton's interpreter at its small size.

    python bench/real/check_interpreted.py [--out DIR] [--only NAME ...] [--timeout S]

Each script runs in its own process with ladder's interpreter backend set up (the host benchmarker
for autotuned kernels, libdevice on the host) and LADDER_SIZE=small, so that the script's own check
against a PyTorch reference runs. The table says, per script, whether it passed, how long it took and
which kernels it launched (recorded at the interpreter's launch); with --out, check.json and check.md
are written there. The exit status is 1 if any script failed.
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

REPO = Path(__file__).resolve().parents[2]
SET = REPO / "bench" / "sets" / "real"

# Runs one script as __main__ after the backend's setup, recording each kernel the interpreter launches.
BOOTSTRAP = """
import json, runpy, sys
from ladder.runner.backends.interpret import backend
backend.setup()
from triton.runtime.interpreter import InterpretedFunction
launched = []
original = InterpretedFunction.run
def run(self, *args, **kwargs):
    if self.fn.__name__ not in launched:
        launched.append(self.fn.__name__)
    return original(self, *args, **kwargs)
InterpretedFunction.run = run
script, record = sys.argv[1], sys.argv[2]
sys.argv = [script]
try:
    runpy.run_path(script, run_name="__main__")
finally:
    with open(record, "w") as handle:
        json.dump(launched, handle)
"""


def check(script: Path, timeout: float) -> dict:
    """One script under the interpreter: passed, seconds, kernels launched, the last error line."""
    env = {**os.environ, "TRITON_INTERPRET": "1", "LADDER_SIZE": "small",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    with tempfile.TemporaryDirectory() as scratch:
        record = Path(scratch) / "launched.json"
        started = time.monotonic()
        try:
            done = subprocess.run([sys.executable, "-c", BOOTSTRAP, str(script), str(record)], cwd=REPO, env=env,
                                  capture_output=True, text=True, timeout=timeout, check=False)
            code, error = done.returncode, (done.stderr.strip().splitlines() or [""])[-1]
        except subprocess.TimeoutExpired:
            code, error = None, f"timed out after {timeout:.0f} s"
        seconds = round(time.monotonic() - started, 1)
        kernels = json.loads(record.read_text()) if record.is_file() else []
    return {"script": script.stem, "passed": code == 0, "exit": code, "seconds": seconds, "kernels": kernels,
            "error": None if code == 0 else error}


def markdown(rows: list[dict]) -> str:
    passed = sum(r["passed"] for r in rows)
    kernels = sum(len(r["kernels"]) for r in rows)
    lines = ["# The real-kernel set under Triton's interpreter (CPU, small sizes)", "",
             f"{passed} of {len(rows)} scripts pass their reference check; {kernels} distinct kernels launched.", "",
             "| script | result | seconds | kernels launched |", "|---|---|---|---|"]
    lines += [f"| {r['script']} | {'pass' if r['passed'] else 'FAIL: ' + (r['error'] or '')} | {r['seconds']:.1f} | "
              f"{', '.join(r['kernels']) or '-'} |" for r in rows]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write check.json and check.md here")
    parser.add_argument("--set", dest="folder", type=Path, default=SET)
    parser.add_argument("--only", nargs="*", default=[])
    parser.add_argument("--timeout", type=float, default=300.0)
    args = parser.parse_args(argv)
    scripts = sorted(p for p in args.folder.glob("*.py") if not p.name.startswith("_"))
    if args.only:
        scripts = [p for p in scripts if p.stem in args.only]
    rows = []
    for script in scripts:
        rows.append(check(script, args.timeout))
        row = rows[-1]
        print(f"{row['script']}: {'pass' if row['passed'] else 'FAIL'} in {row['seconds']:.1f} s, "
              f"{len(row['kernels'])} kernels{'' if row['passed'] else ': ' + row['error']}", flush=True)
    report = markdown(rows)
    print(report)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "check.json").write_text(json.dumps(rows, indent=1))
        (args.out / "check.md").write_text(report)
    return 0 if all(r["passed"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
