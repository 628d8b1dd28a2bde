"""Parsing Nsight Compute's raw CSV page, on a sample in the exact shape ncu 2025.x prints."""
from __future__ import annotations

from pathlib import Path

import pytest

from ladder.diagnoser.profile import ncu

SAMPLE = (Path(__file__).parents[1] / "data" / "ncu_raw_2025.csv").read_text()


@pytest.fixture(scope="module")
def rows():
    return ncu.parse_raw_csv(SAMPLE)


def test_every_profiled_launch_becomes_one_row_in_launch_order(rows):
    assert [(r.index, r.kernel) for r in rows] == [(0, "add_kernel"), (1, "matmul_kernel")]


def test_program_output_and_prof_lines_before_the_table_are_ignored(rows):
    assert rows[1].grid == "(32, 32, 1)"
    assert rows[1].cc == "9.0"


def test_thousands_separators_are_read_as_one_number(rows):
    assert rows[0].value("dram__bytes_read.sum") == 67_133_440.0
    assert rows[1].value("gpu__time_duration.sum") == 1_843_200.0


def test_units_row_is_kept_per_metric(rows):
    assert rows[0].metrics["gpu__time_duration.sum"][1] == "nsecond"
    assert rows[0].metrics["dram__bytes_read.sum"][1] == "byte"


def test_not_available_cells_are_none(rows):
    assert rows[1].value("l1tex__t_sector_hit_rate.pct") is None


def test_counters_group_speed_of_light_occupancy_and_memory(rows):
    add = ncu.counters(rows[0])
    assert add["time_ns"] == 20512.0
    assert add["sol"]["dram_pct"] == pytest.approx(90.12)
    assert add["occupancy"]["achieved_pct"] == pytest.approx(83.94)
    assert add["memory"]["dram_read_bytes"] + add["memory"]["dram_write_bytes"] == 100_696_064


def test_bank_conflicts_become_a_share_of_shared_memory_wavefronts(rows):
    mm = ncu.counters(rows[1])
    assert mm["memory"]["smem_ld_conflict_pct"] == pytest.approx(25.0)
    assert mm["memory"]["smem_st_conflict_pct"] == pytest.approx(50.0)


def test_top_stalls_rank_reasons_and_leave_out_the_selected_warp(rows):
    add, mm = ncu.counters(rows[0]), ncu.counters(rows[1])
    assert add["top_stalls"][0]["reason"] == "long_scoreboard"
    assert [s["reason"] for s in mm["top_stalls"]] == ["wait", "short_scoreboard", "barrier"]


def test_scaled_units_are_converted_to_base_units():
    text = SAMPLE.replace('"nsecond"', '"usecond"', 1)
    row = ncu.parse_raw_csv(text)[0]
    assert ncu.counters(row)["time_ns"] == pytest.approx(20512.0 * 1e3)


def test_output_without_a_table_parses_to_nothing():
    assert ncu.parse_raw_csv("==PROF== Connected to process 1\n==ERROR== something\n") == []


def test_the_command_never_locks_clocks_and_profiles_only_the_bracketed_forward():
    cmd = ncu.command("/usr/bin/ncu", ["python3", "driver.py"], kernels=["add_kernel", "softmax_kernel"])
    assert cmd[cmd.index("--clock-control") + 1] == "none"
    assert cmd[cmd.index("--profile-from-start") + 1] == "off"
    assert cmd[cmd.index("--page") + 1] == "raw"
    assert cmd[cmd.index("--kernel-name") + 1] == "regex:^(add_kernel|softmax_kernel)$"
    assert cmd[-2:] == ["python3", "driver.py"]


def test_the_fallback_command_asks_for_sections_instead_of_metric_names():
    cmd = ncu.command("ncu", ["python3", "d.py"], sections=True)
    assert "--metrics" not in cmd
    assert "WarpStateStats" in cmd


@pytest.mark.parametrize("output,expected", [
    ("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission", "no permission"),
    ("==ERROR== Failed to find metric foo__bar", "ncu: Failed to find metric foo__bar"),
    ("==WARNING== No kernels were profiled.", "profiled no kernel"),
])
def test_failures_become_one_line_reasons(output, expected):
    assert expected in ncu.diagnose_failure(output, 1)


def test_an_unknown_metric_is_recognised_so_the_run_can_fall_back_to_sections():
    assert ncu.unknown_metric("==ERROR== Failed to find metric smsp__foo")
    assert not ncu.unknown_metric("==ERROR== ERR_NVGPUCTRPERM")


def test_align_maps_rows_to_cases_in_launch_order_skipping_other_kernels(rows):
    other = ncu.KernelRow(index=5, kernel="vectorized_elementwise_kernel")
    log = [{"job": 0, "case": 0, "launches": ["add_kernel"]}, {"job": 0, "case": 1, "launches": ["matmul_kernel"]}]
    cases, missing = ncu.align([rows[0], other, rows[1]], log)
    assert missing == 0
    assert [c["kernel"] for c in cases[(0, 0)]] == ["add_kernel"]
    assert [c["kernel"] for c in cases[(0, 1)]] == ["matmul_kernel"]


def test_align_skips_a_script_jobs_summary_line_that_counts_its_launches(rows):
    # script_job logs `{"case": "script", "launches": 3}` before the profiled sites' name lists
    log = [{"job": 0, "case": "script", "launches": 3, "sites": 2},
           {"job": 0, "case": "site:add@train.py:9", "launches": ["add_kernel"]}]
    cases, missing = ncu.align(rows, log)
    assert [c["kernel"] for c in cases[(0, "site:add@train.py:9")]] == ["add_kernel"]
    assert (0, "script") not in cases and missing == 0


def test_align_counts_logged_launches_that_ncu_did_not_profile(rows):
    log = [{"job": 0, "case": 0, "launches": ["add_kernel", "add_kernel"]}]
    cases, missing = ncu.align(rows, log)
    assert len(cases[(0, 0)]) == 1
    assert missing == 1


FAKE_NCU = """#!{python}
import json, sys
args = sys.argv[1:]
log = args[-1]
if "--metrics" in args and {refuse_metrics}:
    print("==ERROR== Failed to find metric smsp__average_warps_issue_stalled_misc_per_issue_active.ratio")
    sys.exit(1)
with open(log, "a") as out:
    out.write(json.dumps({{"job": 0, "case": 0, "launches": ["add_kernel"]}}) + "\\n")
    out.write(json.dumps({{"job": 0, "case": 1, "launches": ["matmul_kernel"]}}) + "\\n")
    out.write(json.dumps({{"job": 0, "case": 2, "launches": [], "error": "RuntimeError: CUDA out of memory"}}) + "\\n")
print(open({sample!r}).read())
"""


def _fake_ncu(tmp_path, monkeypatch, refuse_metrics=False):
    import sys
    script = tmp_path / "ncu"
    script.write_text(FAKE_NCU.format(python=sys.executable, refuse_metrics=refuse_metrics,
                                      sample=str(Path(__file__).parents[1] / "data" / "ncu_raw_2025.csv")))
    script.chmod(0o755)
    monkeypatch.setenv("NCU", str(script))


def test_profile_jobs_runs_ncu_and_returns_counters_per_case(tmp_path, monkeypatch):
    _fake_ncu(tmp_path, monkeypatch)
    got = ncu.profile_jobs([{"solution": "s.py", "problem": "p.py"}])
    assert got["available"]
    assert got["cases"][(0, 1)][0]["occupancy"]["theoretical_pct"] == 12.5
    assert got["errors"] == {(0, 2): "RuntimeError: CUDA out of memory"}


def test_profile_jobs_falls_back_to_sections_when_a_metric_is_unknown(tmp_path, monkeypatch):
    _fake_ncu(tmp_path, monkeypatch, refuse_metrics=True)
    got = ncu.profile_jobs([{"solution": "s.py", "problem": "p.py"}])
    assert got["available"]
    assert len(got["cases"]) == 3


def test_profile_jobs_without_ncu_says_so(monkeypatch):
    monkeypatch.setattr(ncu, "find_ncu", lambda: None)
    got = ncu.profile_jobs([{"solution": "s.py", "problem": "p.py"}])
    assert not got["available"]
    assert "ncu not found" in got["why"]
