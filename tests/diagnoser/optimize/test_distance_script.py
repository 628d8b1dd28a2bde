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


def timed_run(root, key: str, worst: dict, baseline_device: str, last_device: str, compile_ms: float):
    run = root / key
    run.mkdir(parents=True)
    timing = [{"case": 0, "label": CASES[0], "roofline_pct": 90.0, "time_ms": 1.0, "eager_ms": 1.0},
              {"case": 1, "label": CASES[1], **worst}]
    (run / "brief.json").write_text(json.dumps({"round": 2, "brief": {"round": 2, "timing": timing}}))
    records = [{"kind": "baseline", "device": baseline_device, "torch_compile_ms": {"0": 1.0, "1": compile_ms}},
               {"kind": "round", "round": 1, "device": last_device}]
    (run / "journal.jsonl").write_text("".join(json.dumps(record) + "\n" for record in records))


def test_the_worst_case_is_set_beside_how_close_eager_and_torch_compile_come_to_the_same_floor(script, tmp_path):
    worst = {"roofline_pct": 40.0, "time_ms": 2.0, "eager_ms": 4.0}  # eager at 20% of the floor
    timed_run(tmp_path, "level1/03_bmm", worst, "H200", "H200", compile_ms=1.0)  # torch.compile at 80%
    timed_run(tmp_path, "level1/04_matvec", worst, "H200", "H200", compile_ms=8.0)  # at 10%
    timed_run(tmp_path, "level1/17_mm_t", worst, "H200", "H100", compile_ms=1.0)  # another card: not comparable
    out = tmp_path / "distance.md"
    assert script.main(["--runs", str(tmp_path), "--out", str(out)]) == 0
    text = out.read_text()
    rows = {line.split(" | ")[0].strip("| "): line for line in text.splitlines() if line.startswith("| level")}
    assert "n=3000: 40.0% | 20.0% / 80.0% |" in rows["level1/03_bmm"]
    assert "| 20.0% / 10.0% |" in rows["level1/04_matvec"] and "| 20.0% / - |" in rows["level1/17_mm_t"]
    assert ("3 operators with a case short of 75% of its floor, 1 have a worst case that neither eager nor "
            "torch.compile brings closer to the floor than the best does (level1/04_matvec); 1 more") in text
    assert "torch.compile not timed on that card (level1/17_mm_t)." in text


K01_LABELS = ["n=4194304", "n=6291456", "n=8388608"]


def cached_run(root, key: str, pcts: list[float], classes: list[str]):
    """A run whose best is labeled k01 (256-wide blocks: nv.tiny-block on a latency-bound case), its brief
    with no finding and the gate's `pcts`, and its cached diagnosis measuring each case at 30% of its
    floor, of the roofline class `classes` gives it."""
    from ladder.diagnoser.optimize.journal import diagnosis_key

    from ..triage.triage_helpers import LABELED

    solution, problem = LABELED / "k01" / "solution.py", LABELED / "k01" / "problem.py"
    run = root / key
    run.mkdir(parents=True)
    (run / "best.py").write_text(solution.read_text())
    timing = [{"case": i, "label": label, "roofline_pct": pct, "time_ms": 1.0, "eager_ms": 1.0}
              for i, (label, pct) in enumerate(zip(K01_LABELS, pcts))]
    (run / "brief.json").write_text(json.dumps({"round": 2, "brief": {
        "round": 2, "timing": timing, "findings": [], "gap": "3 of 3 cases unexplained",
        "problem_source": problem.read_text()}}))
    (run / "journal.jsonl").write_text(json.dumps({"kind": "baseline", "device": "H200",
                                                   "settings": {"rungs": [1, 2, 3, 4]}}) + "\n")
    profile = {"cases": [{"case": i, "label": label, "efficiency": 0.3, "class": klass, "util_source": "events"}
                         for i, (label, klass) in enumerate(zip(K01_LABELS, classes))]}
    key = diagnosis_key(solution.read_text(), problem.read_text(), [1, 2, 3, 4])
    (run / "diagnoses").mkdir()
    (run / "diagnoses" / f"{key}.json").write_text(json.dumps({"findings": [], "facts": [], "profile": profile}))
    return run


def test_triage_now_judges_a_best_by_the_checks_there_are_now_on_its_cached_measurements(script, tmp_path):
    """A brief written before a check existed holds no finding of it; --triage-now runs rung 1 again on the
    best, with the cached diagnosis' profile, and the gap it finds unexplained there is explained now."""
    run = cached_run(tmp_path, "level1/19_relu", [30.0, 30.0, 30.0], ["latency-bound"] * 3)
    out = tmp_path / "distance.md"
    assert script.main(["--runs", str(tmp_path), "--out", str(out), "--triage-now"]) == 0
    text = out.read_text()
    row = next(line for line in text.splitlines() if line.startswith("| level1/19_relu"))
    assert "| - | 3 of 3 cases unexplained | nv.tiny-block@12 | the findings explain every case's gap" in row
    assert "Judged by this ladder's checks now, 1 of those 1 have every case" in text
    assert "By the issue's measure (each case at 75% of its floor in the gate's timing, or explained by a " \
           "finding), 1 of those 1 meet it." in text

    (run / "best.py").write_text((run / "best.py").read_text() + "\n# edited after its diagnosis\n")
    assert script.main(["--runs", str(tmp_path), "--out", str(out), "--triage-now"]) == 0
    assert "| - | no cached diagnosis of this best |" in out.read_text()


def test_the_issues_measure_lets_a_case_the_gate_puts_within_25_percent_go_unexplained(script, tmp_path):
    """A tiny block explains a latency-bound case, not a compute-bound one: a best whose unexplained case
    the gate times at 75% of its floor or more meets the issue's measure; one with that case at 60% does not."""
    classes = ["latency-bound", "compute-bound", "latency-bound"]
    cached_run(tmp_path, "level1/19_relu", [60.0, 78.0, 90.0], classes)
    cached_run(tmp_path, "level1/20_relu", [60.0, 60.0, 90.0], classes)
    out = tmp_path / "distance.md"
    assert script.main(["--runs", str(tmp_path), "--out", str(out), "--triage-now"]) == 0
    text = out.read_text()
    assert "Judged by this ladder's checks now, 0 of those 2 have every case" in text
    assert "explained by a finding), 1 of those 2 meet it; open: level1/20_relu." in text
