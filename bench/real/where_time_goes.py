"""Where a script's rungs 1-3 spend their time on the device, stage by stage, each in its own process.

    PYTHONPATH=. python3 bench/real/where_time_goes.py --out $OUT/time-split.json [SCRIPT ...]

A climb of `ladder diagnose SCRIPT --rungs 1-3` runs the script several times (rung 1 on meta
tensors, rung 2's timing driver and its Nsight Compute pass, rung 3's JIT capture), each in a fresh
interpreter. This times each of those alone, plus what they all pay (a bare interpreter importing
torch and triton), the script on its own (cold and warm, with and without Triton's autotuning
cache), the timing driver inside an idle ncu process (its medians beside the plain driver's) and
rung 2 as it now runs with ncu (timed and profiled in one run of the script), so that a change to the climb is predicted from numbers rather than guessed.

Each script gets a Triton cache of its own: the cold run compiles from nothing and the later stages
reuse its kernels; every stage but the cache-read one starts with no autotuning choice on disk, as
a climb does (it benchmarks once, then its later runs read the choice, which the driver + ncu stage
reproduces). Stages run in order and the document is rewritten after each, so a cut-off call keeps
what it measured.
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
sys.path.insert(0, str(REPO))
SET = REPO / "bench" / "sets" / "real"
DEFAULT = ("flaggems_argmax", "flaggems_mm", "flashattn_layer_norm")
PROFILE_STAGES = """
import json, sys, time
from ladder.diagnoser.profile import script
path, stage = sys.argv[1], sys.argv[2]
started = time.perf_counter()
measured = script.profile(path, "cuda", use_ncu=stage == "one run")
timed = time.perf_counter() - started
out = {"driver_s": round(timed, 2), "script_s": measured["steady_state"]["script_seconds"],
       "sites": len(measured["cases"]),
       "medians_ms": {c["site"]["key"].split("@")[0]: round(c["time_s"] * 1e3, 5) for c in measured["cases"] if c.get("time_s")}}
if stage == "ncu":
    started = time.perf_counter()
    counters = script.profile_sites(path, None, measured["cases"])
    out.update(ncu_s=round(time.perf_counter() - started, 2), ncu_why=counters["why"])
if stage == "one run":
    out.update(ncu_why=measured["ncu"]["why"])
print(json.dumps(out))
"""


def timed(command: list[str], env: dict[str, str] | None = None, timeout: float = 300.0) -> dict:
    """Wall seconds of one process, its exit status and its JSON answer (its whole output, else its
    last JSON line, else its last line)."""
    started = time.perf_counter()
    try:
        done = subprocess.run(command, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})},
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"wall_s": round(time.perf_counter() - started, 2), "exit": None, "last": f"timed out at {timeout:g} s"}
    try:  # `ladder diagnose --json` prints one indented document
        last = json.dumps(json.loads(done.stdout))
    except json.JSONDecodeError:
        lines = done.stdout.strip().splitlines()
        last = next((line for line in reversed(lines) if line.startswith("{")), None)
        last = last or (lines or done.stderr.strip().splitlines() or [""])[-1]
    return {"wall_s": round(time.perf_counter() - started, 2), "exit": done.returncode, "last": last}


def summarized(result: dict) -> dict:
    """A stage's row: a climb's seconds per rung, another JSON answer as it is, else its last line."""
    try:
        answer = json.loads(result["last"])
    except json.JSONDecodeError:
        return {**result, "last": result["last"][:300]}
    row = {"wall_s": result["wall_s"], "exit": result["exit"]}
    if isinstance(answer, dict) and "rungs" in answer:
        return {**row, "rungs": {str(r["rung"]): r["seconds"] for r in answer["rungs"] if r.get("ran")}}
    return {**row, "answer": answer}


def stages(script: Path) -> list[tuple[str, list[str], dict | None]]:
    from ladder.diagnoser.profile import ncu

    py, diagnose = sys.executable, [sys.executable, "-m", "ladder.diagnoser", "diagnose", str(script), "--json"]
    # the timing driver inside an ncu process that profiles nothing (no profiler range is opened):
    # what one script run serving both the timing and the counters would cost, and do to the medians
    under_ncu = [ncu.find_ncu() or "ncu", "--profile-from-start", "off", "--clock-control", "none",
                 "--target-processes", "all", py, "-c", PROFILE_STAGES, str(script), "driver"]
    autotune_cache = {"TRITON_CACHE_AUTOTUNING": "1"}
    return [
        ("imports", [py, "-c", "import torch, triton; torch.cuda.init()"], None),
        ("script cold", [py, str(script)], None),
        ("script warm", [py, str(script)], None),
        ("script, autotune cache filled", [py, str(script)], autotune_cache),
        ("script, autotune cache read", [py, str(script)], autotune_cache),
        ("rung 1", [*diagnose, "--rungs", "1"], None),
        ("rung 2 driver", [py, "-c", PROFILE_STAGES, str(script), "driver"], None),
        ("rung 2 driver + ncu", [py, "-c", PROFILE_STAGES, str(script), "ncu"], autotune_cache),
        ("rung 2 driver under ncu", under_ncu, None),
        ("rung 2 timed and profiled in one run", [py, "-c", PROFILE_STAGES, str(script), "one run"], autotune_cache),
        ("rung 3", [*diagnose, "--rungs", "3"], None),
        ("rungs 1-3, one climb", [*diagnose, "--rungs", "1-3", "--exhaustive"], None),
    ]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scripts", nargs="*", default=list(DEFAULT))
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--deadline", type=float, default=540.0, help="seconds after which no stage starts")
    parser.add_argument("--stages", nargs="*", help="run only these stages (by name), e.g. to re-measure one change")
    args = parser.parse_args(argv)
    started = time.monotonic()
    document: dict = {"device": timed([sys.executable, "-c", "import torch; print(torch.cuda.get_device_name())"])["last"],
                      "scripts": {}}
    caches = Path(tempfile.mkdtemp(prefix="ladder-time-split-"))
    for name in args.scripts:
        rows = document["scripts"].setdefault(name, {})
        cache = caches / name  # "script cold" compiles from nothing; later stages reuse its kernels
        for stage, command, env in stages(SET / f"{name}.py"):
            if args.stages and stage not in args.stages:
                continue
            if time.monotonic() - started > args.deadline:
                rows[stage] = {"skipped": "deadline"}
                continue
            if stage != "script, autotune cache read":  # no stage but that one may start from a tuned choice
                for tuned in cache.rglob("*.autotune.json"):
                    tuned.unlink()
            rows[stage] = summarized(timed(command, {**(env or {}), "TRITON_CACHE_DIR": str(cache)}))
            print(f"{name}: {stage}: {json.dumps(rows[stage])}", flush=True)
            args.out.write_text(json.dumps(document, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
