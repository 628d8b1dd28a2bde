"""bench/real/check_interpreted.py runs each script of a set under the interpreter backend at its small
size and says which passed and which kernels each launched."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from ..bench_scripts import load_bench_script

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tests" / "diagnoser" / "data" / "kernels" / "script" / "run_scale.py"


def load_check():
    return load_bench_script("real/check_interpreted.py")


def test_a_passing_and_a_failing_script_are_told_apart(tmp_path):
    folder = tmp_path / "set"
    folder.mkdir()
    shutil.copy(SCRIPT, folder / "run_scale.py")
    (folder / "wrong.py").write_text("assert False, 'the reference check failed'\n")
    code = load_check().main(["--set", str(folder), "--out", str(tmp_path / "out"), "--timeout", "120"])
    rows = {r["script"]: r for r in json.loads((tmp_path / "out" / "check.json").read_text())}
    assert code == 1
    assert rows["run_scale"]["passed"] and rows["run_scale"]["kernels"] == ["scale_kernel"]
    assert not rows["wrong"]["passed"] and "the reference check failed" in rows["wrong"]["error"]
    assert "1 of 2 scripts pass" in (tmp_path / "out" / "check.md").read_text()
