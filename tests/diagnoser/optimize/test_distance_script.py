"""bench/optimize/distance.py: each run's distance to its roofline floor, told from its last brief alone."""
from __future__ import annotations

import json

import pytest

from ...bench_scripts import load_bench_script

CASES = ["n=1024", "n=3000"]


def brief(split: dict | None) -> dict:
    return {"round": 3, "gap": "1 of 2 cases unexplained",
            "timing": [{"case": 0, "label": CASES[0], "roofline_pct": 81.0},
                       {"case": 1, "label": CASES[1], "roofline_pct": 20.0}],
            "findings": [{"pattern": "nv.scalar-access", "line": 52,
                          "evidence": [{"type": "source", "cases": [CASES[1]]}]},
                         {"pattern": "nv.tiny-block", "line": 60,
                          "evidence": [{"type": "source", "cases": [CASES[0]]}]},
                         {"pattern": "nv.hardcoded-config", "line": 70, "evidence": [{"type": "fact"}]}],
            "split": split}


@pytest.fixture
def script():
    return load_bench_script("optimize/distance.py")


def write_run(root, key: str, split: dict | None):
    run = root / key
    run.mkdir(parents=True)
    (run / "brief.json").write_text(json.dumps({"round": 3, "brief": brief(split)}))


def test_each_run_is_told_by_its_worst_case_and_what_holds_there(script, tmp_path):
    split = {"case": 1, "kernels": [
        {"kernel": "gemm_kernel", "line": 80, "share": 0.9, "efficiency": 0.15, "class": "latency-bound"},
        {"kernel": "norm_kernel", "line": 90, "share": 0.1, "efficiency": 0.5, "class": "memory-bound"}]}
    write_run(tmp_path, "level2/37_gemm", split)
    write_run(tmp_path, "level1/23_softmax", {"case": 1, "error": "replay failed"})
    out = tmp_path / "distance.md"
    assert script.main(["--runs", str(tmp_path), "--out", str(out)]) == 0
    rows = {line.split(" | ")[0].strip("| "): line
            for line in out.read_text().splitlines() if line.startswith("| level")}
    gemm = rows["level2/37_gemm"]
    assert "n=3000: 20.0%" in gemm and "| 1/2 |" in gemm
    assert "gemm_kernel (line 80) 90% of the forward at 15% of its own floor, latency-bound" in gemm
    # the finding that holds only on the other case is not blamed for the worst one
    assert "nv.scalar-access@52, nv.hardcoded-config@70" in gemm and "nv.tiny-block" not in gemm
    assert "split failed: replay failed" in rows["level1/23_softmax"]
