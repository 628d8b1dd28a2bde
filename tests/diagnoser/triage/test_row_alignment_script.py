"""bench/triage/row_alignment.py: the two layouts of one GEMM hold the same values and give the same
product before anything is timed, so a difference in time is the layout's alone."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ...bench_scripts import ROOT, load_bench_script

SCRIPT = ROOT / "bench" / "triage" / "row_alignment.py"
script = load_bench_script("triage/row_alignment.py")


def test_the_lined_layout_is_a_view_of_the_same_values_with_rows_on_whole_lines():
    torch = pytest.importorskip("torch")
    values = torch.randn((5, 200)).half()
    dense, lined = script.laid(values, lined=False), script.laid(values, lined=True)
    assert dense.stride(0) == 200 and lined.stride(0) == 256 and torch.equal(dense, lined)
    assert script.laid(values[:, :128], lined=True).stride(0) == 192  # the control: one line more


def test_quick_checks_every_contestant_on_both_layouts(tmp_path):
    # a process of its own: --quick sets the interpreter before Triton is first imported
    done = subprocess.run([sys.executable, str(SCRIPT), "--quick"], cwd=ROOT, env={**os.environ, "OUT": str(tmp_path)},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads((tmp_path / "row_alignment.json").read_text())
    assert {row["contestant"] for row in found["rows"]} == {"tma 32x32x32", "cublas (torch.matmul)"}
    assert all(row["correct"] and "dense_ms" not in row for row in found["rows"])  # the interpreter times nothing
    assert {row["lined_row_bytes"] for row in found["rows"]} == {512, 384}


def test_quick_refuses_a_process_that_imported_triton_compiled(monkeypatch):
    pytest.importorskip("triton")
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    with pytest.raises(SystemExit, match="has not imported Triton yet"):
        script.main(["--quick"])
