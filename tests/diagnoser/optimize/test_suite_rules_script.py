"""bench/optimize/suite_rules.py, the suite in pieces of one device call: a call killed from outside
(SIGTERM, Ctrl-C) still packs the run folders it has, so the next call resumes from them rather
than from the previous call's."""
from __future__ import annotations

import tarfile

import pytest

from ...bench_scripts import load_bench_script


@pytest.fixture
def script():
    return load_bench_script("optimize/suite_rules.py")


def test_an_interrupted_call_still_packs_the_journals_it_wrote(script, tmp_path, monkeypatch, capsys):
    runs, pack = tmp_path / "suite-rules", tmp_path / "rules.tgz"

    def interrupted(operators, settings, proposer, out, progress):
        folder = out / operators[0].key
        folder.mkdir(parents=True)
        (folder / "journal.jsonl").write_text('{"kind": "baseline", "round": 0}\n')
        progress(f"{operators[0].key}: round 1: gate")
        raise KeyboardInterrupt("terminated")

    monkeypatch.setattr(script.optimized, "optimize_suite", interrupted)
    with pytest.raises(KeyboardInterrupt):
        script.main(["--runs", str(runs), "--pack", str(pack), "--only", "19_relu"])
    with tarfile.open(pack) as packed:
        assert "suite-rules/level1/19_relu/journal.jsonl" in packed.getnames()
    assert "s] level1/19_relu: round 1: gate" in capsys.readouterr().out  # each line says when it came


def test_with_ray_the_unfinished_operators_run_at_once_under_the_calls_deadline(script, tmp_path, monkeypatch):
    from ladder.diagnoser.optimize import scale

    runs = tmp_path / "suite-rules"
    done = runs / "level1" / "19_relu"
    done.mkdir(parents=True)
    (done / "journal.jsonl").write_text('{"kind": "baseline", "round": 0}\n'
                                        '{"kind": "stop", "reason": "nothing new", "final": true}\n')
    seen = {}

    def at_once(operators, settings, proposer, out, address, echo):
        seen.update(keys=[op.key for op in operators], deadline=settings.deadline, address=address)
        return {"operators": [{"operator": op.key, "error": "not run here"} for op in operators]}

    monkeypatch.setattr(scale, "optimize_suite_ray", at_once)
    script.main(["--runs", str(runs), "--ray", "local", "--deadline", "300", "--only", "19_relu", "24_log_softmax",
                 "26_gelu"])
    assert seen["keys"] == ["level1/24_log_softmax", "level1/26_gelu"] and seen["address"] == "local"
    assert seen["deadline"] is not None
