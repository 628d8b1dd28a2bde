"""The profiling driver, run on the CPU through Triton's interpreter (no profiler, no launch hook)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

KERNELS = Path(__file__).parents[1] / "data" / "kernels"
REPO = Path(__file__).resolve().parents[3]


def run_driver(tmp_path, jobs):
    jobs_path, log_path = tmp_path / "jobs.json", tmp_path / "log.jsonl"
    jobs_path.write_text(json.dumps(jobs))
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "diagnoser.profile.driver", str(jobs_path), str(log_path)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in log_path.read_text().splitlines()]


def test_one_log_line_per_case_and_a_bad_job_does_not_stop_the_next(tmp_path):
    pair = {"solution": str(KERNELS / "scaled_add" / "solution.py"),
            "problem": str(KERNELS / "scaled_add" / "problem.py"), "device": "cpu"}
    missing = {**pair, "solution": str(tmp_path / "nope.py")}
    log = run_driver(tmp_path, [missing, pair])
    assert [(entry["job"], entry["case"]) for entry in log] == [(0, "start"), (0, "all"), (1, "start"), (1, 0), (1, 1)]
    assert "not found" in log[1]["error"]
    assert not any(entry.get("error") for entry in log[2:])
