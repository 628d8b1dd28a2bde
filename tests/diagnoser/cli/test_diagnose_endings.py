"""How `ladder diagnose` ends on real subjects: its output stays its own, and a subject with nothing
to diagnose, a rung that fails, a hung compile, a missing device or Ctrl-C is an error with a
non-zero status, never a success report.

These run `ladder` as a process, as a user does: only a real process has the descriptor 1 that a
script's prints and C code write to.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ladder.diagnoser.cli.errors import CANNOT_RUN, INTERRUPTED, OK

DATA = Path(__file__).parent / "data"
REPOSITORY = Path(__file__).resolve().parents[3]


def ladder_command(*args: str) -> list[str]:
    return [sys.executable, "-c", "from diagnoser.cli import main; main(prog_name='ladder')", *args]


def ladder(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(ladder_command(*args), cwd=REPOSITORY, capture_output=True, text=True, timeout=timeout,
                          check=False)


def test_a_script_that_prints_to_stdout_leaves_the_json_parseable():
    result = ladder("diagnose", str(DATA / "noisy_script.py"), "--backend", "aot", "--rungs", "1-3", "--json")
    assert result.returncode == OK, result.stderr
    report = json.loads(result.stdout)
    assert report["reached"] == 3 and report["facts"]
    for line in ("the script's own print at import", "a raw write to descriptor 1", "launching {"):
        assert line in result.stderr
        assert line not in result.stdout


def test_a_file_with_no_triton_launch_is_an_error_not_a_clean_report():
    result = ladder("diagnose", str(DATA / "no_kernel.py"), "--backend", "aot", "--json")
    assert result.returncode == CANNOT_RUN
    report = json.loads(result.stdout)  # the partial report, with what stopped it
    assert "launched no Triton kernel" in report["error"]
    assert not next(r for r in report["rungs"] if r["rung"] == 4)["ran"]
    last = result.stderr.strip().splitlines()[-1]
    assert last == "Error: no_kernel.py launched no Triton kernel (aot capture): nothing to diagnose"


def test_a_rung_that_fails_ends_the_command_with_its_error():
    result = ladder("diagnose", str(DATA / "failing_script.py"), "--backend", "aot", "--rungs", "1-3")
    assert result.returncode == CANNOT_RUN
    assert "**Stopped: rung 3 (IR attribution) failed:" in result.stdout
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("Error: rung 3 (IR attribution) failed:") and "the script's own bug" in last


def test_backend_cuda_without_a_gpu_is_a_one_line_json_error():
    result = ladder("diagnose", str(DATA / "noisy_script.py"), "--backend", "cuda", "--json")
    assert result.returncode == CANNOT_RUN
    error = json.loads(result.stdout)
    assert error["kind"] == "BackendUnavailable" and error["exit_code"] == CANNOT_RUN
    assert error["error"].startswith("--backend cuda is not available here")
    assert result.stderr.strip().splitlines() == [f"Error: {error['error']}"]


@pytest.mark.slow
def test_a_hanging_compile_is_stopped_at_its_limit_and_reported():
    started = time.monotonic()
    result = ladder("diagnose", str(DATA / "hanging_compile.py"), "--backend", "aot", "--rungs", "1-3",
                    "--rung-timeout", "ir=4", "--json")
    assert time.monotonic() - started < 60
    assert result.returncode == CANNOT_RUN
    report = json.loads(result.stdout)
    ir = next(r for r in report["rungs"] if r["rung"] == 3)
    assert ir["status"] == "failed" and ir["timed_out"] and 4 <= ir["seconds"] < 30
    assert next(r for r in report["rungs"] if r["rung"] == 1)["status"] == "ok"  # kept in the report
    assert "timed out: stopped after 4 s" in report["error"]


@pytest.mark.slow
def test_ctrl_c_prints_the_rungs_done_so_far_and_exits_130():
    process = subprocess.Popen(ladder_command("diagnose", str(DATA / "hanging_compile.py"), "--backend", "aot",
                                              "--json"),
                               cwd=REPOSITORY, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    heard: list[str] = []  # what diagnose said, shown when the test fails
    try:
        for line in process.stderr:
            heard.append(line)
            if "rung 3" in line:
                break
        time.sleep(1.0)
        os.kill(process.pid, signal.SIGINT)
        try:
            stdout, rest = process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            stdout, rest = process.communicate()
            pytest.fail("diagnose went on 60 s after Ctrl-C:\n" + "".join(heard) + rest)
        heard.append(rest)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    said = "".join(heard)
    assert process.returncode == INTERRUPTED, said
    report = json.loads(stdout)
    rungs = {r["rung"]: r for r in report["rungs"]}
    assert rungs[1]["status"] == "ok", said
    assert rungs[3]["interrupted"] and rungs[3]["status"] == "failed", said
    assert not rungs[4]["ran"] and rungs[4]["why"].startswith("not climbed: interrupted during rung 3"), said
    assert report["error"].startswith("interrupted during rung 3"), said
