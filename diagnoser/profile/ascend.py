"""Rung 2 on Ascend NPUs: torch_npu event timing from the runner, pipeline shares from msprof.

Written to the documented APIs (torch_npu, `msprof op`, op_summary columns); untested on Ascend
hardware. The class of a case comes from its busiest pipeline (`msprof.bottleneck`), or from the
event timing against the ceilings when msprof is not there.
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from ladder.diagnoser.profile import msprof, roofline
from ladder.diagnoser.profile.ncu import REPO, read_log
from ladder.diagnoser.profile.nvidia import bench
from ladder.runner import roofline as runner_roofline

TIMEOUT_S = 300.0


def ceilings(device: str) -> dict:
    """The runner's ceilings record for the NPU: measured if cached, else the table of the part the
    device names (`Ascend910B3`), else the default Ascend part's."""
    from ladder.runner import hardware

    part = f"npu:{device}"
    return runner_roofline.load_ceilings(device, target=part if hardware.for_target(part) else "npu")


def collect(solution: str, problem: str, kernels: list[str]) -> tuple[dict, str]:
    """msprof rows per case, mapped through the driver's launch log (warm-up launches included)."""
    executable = msprof.find_msprof()
    if executable is None:
        return {}, "msprof not found (part of the CANN toolkit)"
    with tempfile.TemporaryDirectory(prefix="ladder-msprof-") as work:
        jobs, log = Path(work, "jobs.json"), Path(work, "launches.jsonl")
        jobs.write_text(json.dumps([{"solution": solution, "problem": problem, "device": "npu"}]))
        program = [sys.executable, "-m", "ladder.diagnoser.profile.driver", str(jobs), str(log)]
        kernel = kernels[0] if len(kernels) == 1 else None
        done = subprocess.run(msprof.command(executable, program, str(Path(work, "out")), kernel, launch_count=100),
                              cwd=REPO, capture_output=True, text=True, timeout=TIMEOUT_S)
        rows = msprof.read_output(Path(work, "out"))
        entries = read_log(log)
    if not rows:
        return {}, f"msprof produced no operator summary (exit {done.returncode})"
    per_case: dict = {}
    position = 0
    for entry in entries:
        for phase in ("warmup", "launches"):
            for name in entry.get(phase, []):
                match = next((i for i in range(position, len(rows)) if rows[i]["op"] == name), None)
                if match is None:
                    continue
                position = match + 1
                if phase == "launches":
                    per_case.setdefault(entry["case"], []).append(rows[match])
    return per_case, f"{len(rows)} operator launches summarised"


def profile(solution: str, problem: str, *, use_msprof: bool = True, cores: int | None = None) -> dict:
    record = bench(solution, problem, backend="npu")
    kernels = sorted({k for case in record["cases"] for k in case.get("kernels") or []})
    per_case, why = collect(solution, problem, kernels) if use_msprof else ({}, "msprof disabled")
    return assemble(record, per_case, why, cores)


def assemble(record: dict, per_case: dict | None = None, why: str = "msprof not run", cores: int | None = None) -> dict:
    """Rung 2's profile from the runner's timing of a solution on the NPU (`bench_pair`'s flat record)
    and, where msprof ran, its operator rows per case: the class of each case against the part's
    ceilings, msprof's busiest pipeline deciding it when there."""
    per_case = per_case or {}
    limits = ceilings(record["device"] or "npu")
    cases = []
    for case in record["cases"]:
        out = {"case": case["case"], "params": case.get("params", {}), "kernels": case.get("kernels") or [],
               "launches": case.get("launches"), "correct": case.get("correct")}
        if case.get("time_ms"):
            time_s = case["time_ms"]["median"] / 1e3
            peak = runner_roofline.peak_flops(limits, case.get("compute_dtype"), case.get("allow_tf32"))
            out.update(roofline.classify(time_s, case.get("flops") or 0.0, case.get("bytes") or 0.0,
                                         {"bandwidth": limits["bandwidth"], "flops": peak}, case.get("launches") or 1))
            out.update({"time_s": time_s, "ref_time_s": (case.get("reference_ms") or 0) / 1e3 or None,
                        "flops": case.get("flops"), "bytes": case.get("bytes"), "ceiling_flops": peak})
        rows = per_case.get(case["case"], [])
        if rows:
            slowest = max(rows, key=lambda r: r.get("duration_us") or 0)
            verdict = msprof.bottleneck(slowest, cores)
            out["msprof"] = {"rows": rows, "bottleneck": verdict}
            if verdict["class"]:
                out["class"], out["why"] = verdict["class"], f"msprof: {verdict['why']}"
        cases.append(out)
    return {"backend": "npu", "device": record["device"], "ceilings": limits,
            "ncu": {"available": False, "why": "Ascend: msprof instead of ncu"},
            "msprof": {"available": bool(per_case), "why": why, "note": "untested on Ascend hardware"},
            "correct": record["ok"], "rejected": record["rejected"], "cases": cases}
