"""bench/optimize/agent_submit.py: the n-th agent round of a run plays the operator's n-th staged
candidate, at the round the run waits on, and a candidate already played is never sent again."""
from __future__ import annotations

import json
import subprocess

import pytest

from ...bench_scripts import load_bench_script

KEY = "level1/23_softmax"


@pytest.fixture
def script(tmp_path, monkeypatch):
    module = load_bench_script("optimize/agent_submit.py")
    staged = tmp_path / "staged"
    staged.mkdir()
    (staged / "candidates.json").write_text(json.dumps({KEY: [
        {"file": "23_softmax_r1.py", "summary": "first"}, {"file": "23_softmax_r2.py", "summary": "second"}]}))
    monkeypatch.setattr(module, "STAGED", staged)
    return module


def fake_ladder(calls: list[tuple[str, ...]], waiting_for: int):
    def ladder(*args: str) -> subprocess.CompletedProcess:
        calls.append(args)
        return subprocess.CompletedProcess(args, 0, f"round {waiting_for}: r{waiting_for}-c1 accepted\n", "")
    return ladder


def played(script, monkeypatch, rounds: list[int], waiting_for: int) -> None:
    """The run's journal as agent_submit reads it: the agent's rounds so far, and the round it waits on."""
    monkeypatch.setattr(script, "own_rounds", lambda journal: [{"round": r} for r in rounds])
    monkeypatch.setattr(script.agent, "status", lambda run: {"state": "waiting", "waiting_for": waiting_for})


def test_the_next_staged_candidate_is_submitted_at_the_round_the_run_waits_on(script, tmp_path, monkeypatch):
    runs = tmp_path / "runs"
    (runs / KEY).mkdir(parents=True)
    (runs / KEY / "journal.jsonl").write_text("")
    calls: list[tuple[str, ...]] = []
    monkeypatch.setattr(script, "ladder", fake_ladder(calls, waiting_for=4))
    played(script, monkeypatch, [3], waiting_for=4)
    assert script.main(["--runs", str(runs)]) == 0
    submitted = [call for call in calls if call[:2] == ("optimize", "submit")]
    assert submitted == [("optimize", "submit", str((runs / KEY).resolve()), str(script.STAGED / "23_softmax_r2.py"),
                          "--round", "4", "--summary", "second")]
    assert (runs / KEY / "submit-r4.txt").read_text() == "round 4: r4-c1 accepted\n"


def test_a_run_that_played_every_staged_candidate_gets_nothing(script, tmp_path, monkeypatch, capsys):
    runs = tmp_path / "runs"
    (runs / KEY).mkdir(parents=True)
    (runs / KEY / "journal.jsonl").write_text("")
    calls: list[tuple[str, ...]] = []
    monkeypatch.setattr(script, "ladder", fake_ladder(calls, waiting_for=5))
    played(script, monkeypatch, [3, 4], waiting_for=5)
    assert script.main(["--runs", str(runs)]) == 0
    assert calls == [] and "all 2 staged candidates were submitted (rounds 3, 4)" in capsys.readouterr().out


def test_operators_are_played_in_the_order_only_names_them(script, tmp_path, monkeypatch, capsys):
    """A call cut short by its deadline must have played the operators asked for first, not the
    manifest's first ones."""
    other = "level1/19_relu"
    manifest = json.loads((script.STAGED / "candidates.json").read_text())
    manifest[other] = [{"file": "19_relu_r1.py", "summary": "relu"}]
    (script.STAGED / "candidates.json").write_text(json.dumps(manifest))
    runs = tmp_path / "runs"
    for key in (KEY, other):
        (runs / key).mkdir(parents=True)
        (runs / key / "journal.jsonl").write_text("")
    calls: list[tuple[str, ...]] = []
    monkeypatch.setattr(script, "ladder", fake_ladder(calls, waiting_for=3))
    played(script, monkeypatch, [], waiting_for=3)
    assert script.main(["--runs", str(runs), "--only", other, KEY, "level1/99_unstaged"]) == 1
    submitted = [call[2] for call in calls if call[:2] == ("optimize", "submit")]
    assert submitted == [str((runs / other).resolve()), str((runs / KEY).resolve())]
    assert "level1/99_unstaged: no candidate is staged for it" in capsys.readouterr().out
