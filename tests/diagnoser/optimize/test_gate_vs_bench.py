"""bench/optimize/gate_vs_bench.py: a best timed as its last gate did and as a re-check does, in turn."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from ladder.diagnoser.optimize.gate import CandidateVerdict, GateResult
from ladder.diagnoser.optimize.journal import Journal

from ...bench_scripts import load_bench_script

ROOT = Path(__file__).resolve().parents[3]
ADD = ROOT / "tests" / "runner" / "fixtures" / "add"
gate_vs_bench = load_bench_script("optimize/gate_vs_bench.py")


def two_round_run(runs: Path) -> Path:
    """Round 1 accepted r1-c2 over the initial version; round 2 timed the best against r2-c1, refused."""
    folder = runs / "level1" / "op"
    journal = Journal(folder)
    journal.start({"solution": str(ADD / "solution.py"), "problem": str(ADD / "problem.py"), "best": {"round": 0},
                   "settings": {"gate": {"backend": "cuda", "seeds": 2, "budget_s": 0.4, "min_reps": 20}}})
    for number, accepted in ((1, "r1-c2"), (2, None)):
        journal.append({"kind": "round", "round": number, "device": "NVIDIA H100 80GB HBM3", "accepted": accepted,
                        "spread": 0.01, "best": {"round": 1, "file": "best.py", "geomean_vs_initial": 2.0}})
    (folder / "candidates").mkdir(exist_ok=True)
    for name in ("r1-c1", "r1-c2", "r2-c1"):
        shutil.copy(ADD / "solution.py", folder / "candidates" / f"{name}.py")
    for name in ("initial", "best"):
        shutil.copy(ADD / "solution.py", folder / f"{name}.py")
    return folder


def test_the_last_timed_round_is_played_again_against_the_best_of_its_time(tmp_path):
    folder = two_round_run(tmp_path / "runs")
    shape = gate_vs_bench.last_gate_round(folder)
    assert shape["round"] == 2 and shape["accepted"] is None
    assert shape["best_then"] == folder / "candidates" / "r1-c2.py"
    assert list(shape["candidates"]) == ["r2-c1"]
    assert (shape["gate"].budget_s, shape["gate"].min_reps, shape["gate"].backend) == (0.4, 20, "cuda")


def test_gate_and_recheck_alternate_and_each_run_is_kept_as_it_ends(tmp_path, monkeypatch, capsys):
    folder = two_round_run(tmp_path / "runs")
    gates, rechecks = [], []

    def fake_gate(problem, best, initial, candidates, settings):
        gates.append((best.name, initial.name, sorted(candidates), settings.budget_s))
        rows = [{"case": 0, "label": "n=1", "time_ms": 0.5, "speedup_vs_initial": 2.25}]
        record = {"solutions": {"best": {}, "initial": {}, "r2-c1": {}}}
        return GateResult({"r2-c1": CandidateVerdict("r2-c1", False, "slower", True, True, True)}, 0.01, rows,
                          "NVIDIA H100 80GB HBM3", "GPU-1", True, record)

    def fake_recheck(run, runs, backend, seeds):
        rechecks.append((run, runs))
        return {"device": "NVIDIA H100 80GB HBM3", "correct": True, "speedup": 2.0,
                "cases": [{"label": "n=1", "speedup_vs_initial": 2.0, "best_ms": 0.5, "initial_ms": 1.0}]}

    monkeypatch.setattr(gate_vs_bench, "run_gate", fake_gate)
    monkeypatch.setattr(gate_vs_bench.recheck, "recheck", fake_recheck)
    out = tmp_path / "gate-vs-bench.json"
    assert gate_vs_bench.main([str(folder), "--out", str(out), "--repeat", "2"]) == 0
    runs = json.loads(out.read_text())["runs"]
    assert [run["shape"] for run in runs] == ["gate", "re-check", "gate", "re-check"]
    assert gates == [("r1-c2.py", "initial.py", ["r2-c1"], 0.4)] * 2 and rechecks == [(folder, tmp_path / "runs")] * 2
    assert runs[0]["cases"] == [{"label": "n=1", "best_ms": 0.5, "initial_ms": 1.125, "speedup_vs_initial": 2.25}]
    assert "gate 1: 2.250x" in capsys.readouterr().out
    assert gate_vs_bench.main([str(folder), "--out", str(out), "--repeat", "1", "--deadline", "-1"]) == 0
    assert len(json.loads(out.read_text())["runs"]) == 4  # nothing started past the deadline, nothing lost
