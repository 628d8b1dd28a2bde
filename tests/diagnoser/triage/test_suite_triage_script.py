"""bench/triage/suite_triage.py --runs: the best kernel of each run of an optimization folder is
triaged against its suite problem, not the suite's initial solution."""
from __future__ import annotations

import shutil

from tests.bench_scripts import ROOT, load_bench_script


def test_a_run_folder_s_best_kernels_are_triaged_against_their_suite_problems(tmp_path):
    module = load_bench_script("triage/suite_triage.py")
    fixed = ROOT / "tests" / "diagnoser" / "triage" / "fixtures" / "tile_misfit" / "fixed.py"
    run = tmp_path / "runs" / "level1" / "01_square_matmul"
    run.mkdir(parents=True)
    shutil.copy(fixed, run / "best.py")   # a 128x256 tile: a different kernel from the suite's own
    kernels = module.run(None, None, tmp_path / "runs")
    assert list(kernels) == ["level1/01_square_matmul"]
    [finding] = [f for f in kernels["level1/01_square_matmul"]["findings"] if f["pattern"] == "nv.tile-misfit"]
    detail = finding["evidence"][0]["detail"]
    assert finding["file"].endswith("best.py") and "3000x3000x3008" in detail and "partial last wave" in detail
