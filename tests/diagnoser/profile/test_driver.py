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
    done = subprocess.run([sys.executable, "-m", "ladder.diagnoser.profile.driver", str(jobs_path), str(log_path)],
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


class Launched:
    def __init__(self, name):
        self.name = name

    def get(self):
        return {"name": self.name}


class Tuner:
    """Stands for the autotune watch: 'tuning' while a forward's first call times its configs."""

    def __init__(self):
        self.on = False

    def tuning(self):
        return self.on


def autotuned_forward(log, tuner, configs=4):
    """A forward like an autotuned GEMM's: the first call times each config, then launches once."""
    calls = []

    def forward():
        if not calls:
            tuner.on = True
            for _ in range(configs * 10):
                log(Launched("matmul_kernel"))
            tuner.on = False
        log(Launched("matmul_kernel"))
        calls.append(1)
    return forward


def test_warm_up_runs_until_the_autotuner_is_done_and_two_calls_launch_alike():
    from ladder.diagnoser.profile.driver import LaunchLog, warm_up

    tuner = Tuner()
    log = LaunchLog(tuner)
    warm = warm_up(log, autotuned_forward(log, tuner))
    assert warm["calls"] == 3 and warm["steady"]  # tuned call, a first clean one, one that matches it
    assert warm["tuning_launches"] == 40 and len(warm["names"]) == 43


def test_warm_up_gives_up_on_a_forward_that_never_settles():
    from ladder.diagnoser.profile.driver import MAX_WARMUP_CALLS, LaunchLog, warm_up

    log = LaunchLog()
    count = []

    def growing():
        count.append(1)
        for _ in count:
            log(Launched("k"))

    warm = warm_up(log, growing)
    assert warm["calls"] == MAX_WARMUP_CALLS and not warm["steady"]


def test_each_case_line_says_how_the_forward_was_warmed_up(tmp_path):
    pair = {"solution": str(KERNELS / "scaled_add" / "solution.py"),
            "problem": str(KERNELS / "scaled_add" / "problem.py"), "device": "cpu"}
    log = run_driver(tmp_path, [pair])
    warmed = [entry["steady_state"] for entry in log if isinstance(entry["case"], int)]
    assert warmed and all(state["steady"] and state["warmup_calls"] == 2 for state in warmed)
