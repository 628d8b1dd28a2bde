"""Ascend op summaries (msprof), on a sample with the columns the CANN profiling guide documents."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ladder.diagnoser.profile import msprof

SAMPLE = Path(__file__).parents[1] / "data" / "op_summary_20250101000000.csv"


def test_summary_rows_keep_duration_block_dim_and_pipeline_ratios():
    rows = msprof.parse_summary(SAMPLE)
    assert [r["op"] for r in rows] == ["_layer_norm_fwd_fused", "add_kernel"]
    assert rows[0]["duration_us"] == pytest.approx(35.48)
    assert rows[0]["block_dim"] == 48
    assert rows[0]["pipes"]["aiv_scalar"] == pytest.approx(0.605)
    assert rows[1]["times"]["aiv_mte2"] == pytest.approx(8.4)


def test_a_scalar_dominated_kernel_is_latency_bound_as_the_ascend_guide_reads_it():
    layer_norm = msprof.parse_summary(SAMPLE)[0]
    got = msprof.bottleneck(layer_norm)
    assert (got["pipe"], got["class"]) == ("aiv_scalar", "latency-bound")


def test_a_copy_dominated_kernel_is_memory_bound():
    add = msprof.parse_summary(SAMPLE)[1]
    assert msprof.bottleneck(add)["class"] == "memory-bound"


def test_more_blocks_than_cores_is_called_out():
    layer_norm = msprof.parse_summary(SAMPLE)[0]
    assert "exceeds the 40 cores" in msprof.bottleneck(layer_norm, cores=40)["why"]


def test_read_output_finds_the_summary_anywhere_under_the_output_folder(tmp_path):
    nested = tmp_path / "PROF_000001" / "mindstudio_profiler_output"
    nested.mkdir(parents=True)
    shutil.copy(SAMPLE, nested / SAMPLE.name)
    assert len(msprof.read_output(tmp_path)) == 2


def test_the_command_is_msprof_op_with_an_output_folder():
    cmd = msprof.command("msprof", ["python3", "driver.py"], "/tmp/out", kernel="add_kernel")
    assert cmd[:2] == ["msprof", "op"]
    assert "--output=/tmp/out" in cmd and "--kernel-name=add_kernel" in cmd
