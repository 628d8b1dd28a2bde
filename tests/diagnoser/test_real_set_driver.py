"""bench/real/diagnose_all.py, the batched driver of the real-kernel set, on this CPU machine
(compile-only backend): a record per script as it finishes, a rerun that skips what is done, a
deadline that stops before starting what it cannot finish, and a script that launches nothing
counted as not completed whatever the exit status of `ladder diagnose`."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ..bench_scripts import load_bench_script

SCRIPT = Path(__file__).parent / "data" / "kernels" / "script" / "run_scale.py"


@pytest.fixture(scope="module")
def driver():
    return load_bench_script("real/diagnose_all.py")


@pytest.fixture(scope="module")
def first_run(driver, tmp_path_factory):
    folder = tmp_path_factory.mktemp("set")
    shutil.copy(SCRIPT, folder / "run_scale.py")
    (folder / "no_kernel.py").write_text('print("a script that launches no Triton kernel")\n')
    out = folder / "out"
    code = driver.main(["--set", str(folder), "--out", str(out), "--backend", "aot", "--small"])
    return folder, out, code


@pytest.mark.slow
def test_each_script_gets_a_record_and_the_summary_counts_them(first_run):
    _, out, code = first_run
    assert code == 0
    scale = json.loads((out / "scripts" / "run_scale.json").read_text())
    assert scale["completed"] and scale["kernels"] == ["scale_kernel"] and scale["stdout"] == "clean"
    assert set(scale["rung_seconds"]) == {"1", "2", "3"} and scale["within_limit"]
    assert not scale["rung2_measured"] and not scale["gap_assessed"]  # no device here: rung 2 is skipped
    assert (out / "reports" / "run_scale.json").is_file()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["completed"] == {"count": 1, "of": 2, "rate": 0.5}
    assert summary["gap_assessed"]["count"] == 0 and not summary["targets"]["all completed"]
    assert "| run_scale | 0 |" in (out / "summary.md").read_text()


@pytest.mark.slow
def test_a_script_without_a_kernel_is_not_a_completed_diagnosis(first_run):
    _, out, _ = first_run
    record = json.loads((out / "scripts" / "no_kernel.json").read_text())
    assert not record["completed"] and record["why_not"]
    assert "no_kernel: " in (out / "summary.md").read_text()


@pytest.mark.slow
def test_a_rerun_skips_the_scripts_already_done(driver, first_run, capsys):
    folder, out, _ = first_run
    before = (out / "scripts" / "run_scale.json").stat().st_mtime_ns
    assert driver.main(["--set", str(folder), "--out", str(out), "--backend", "aot", "--small"]) == 0
    assert "2 done before, 0 to run" in capsys.readouterr().out
    assert (out / "scripts" / "run_scale.json").stat().st_mtime_ns == before
    assert driver.main(["--set", str(folder), "--out", str(out), "--backend", "aot", "--only", "no_kernel"]) == 0
    assert "1 scripts, 1 done before, 0 to run" in capsys.readouterr().out
    assert json.loads((out / "summary.json").read_text())["completed"]["of"] == 2  # --only picks what runs, not the set


def test_past_the_deadline_nothing_starts_and_the_run_says_to_resume(driver, tmp_path, capsys):
    shutil.copy(SCRIPT, tmp_path / "run_scale.py")
    out = tmp_path / "out"
    assert driver.main(["--set", str(tmp_path), "--out", str(out), "--backend", "aot", "--deadline", "0"]) == 3
    assert "run again with the same --out" in capsys.readouterr().out
    assert not list((out / "scripts").iterdir())
    assert json.loads((out / "summary.json").read_text())["done"] == 0


def test_a_report_after_the_script_s_own_output_is_still_read(driver):
    report, kind = driver.parse_report('hello from the script\n{"schema": "ladder.diagnose/1", "rungs": []}')
    assert kind == "mixed" and report["rungs"] == []
    assert driver.parse_report("no report at all") == (None, "none")


def test_an_unknown_script_name_is_a_one_line_error(driver, tmp_path):
    shutil.copy(SCRIPT, tmp_path / "run_scale.py")
    with pytest.raises(SystemExit, match="no such script"):
        driver.main(["--set", str(tmp_path), "--out", str(tmp_path / "out"), "--only", "missing"])
