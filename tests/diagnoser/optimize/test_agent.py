"""The agent protocol: a brief in the run directory, `submit` gates and records one candidate per round,
exactly once, through ladder's gate; `status` says where the run stands.

The end-to-end test drives the real command line with a scripted agent and the real judge (the
host-clock backend, so that a faster candidate can be accepted on the CPU); the others check the
protocol's control flow with the deterministic gate of test_loop."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from ladder.diagnoser.optimize import agent
from ladder.diagnoser.optimize.gate import GateSettings
from ladder.diagnoser.optimize.journal import Journal, JournalError
from ladder.diagnoser.optimize.loop import Settings, optimize
from ladder.diagnoser.optimize.proposers import agent as agent_proposer
from ladder.diagnoser.optimize.proposers.agent import AgentProposer

from .test_loop import INITIAL, fake_gate

ROOT = Path(__file__).resolve().parents[3]
SCALE = Path(__file__).parent / "fixtures" / "scale"
FASTER = (SCALE / "solution.py").read_text().replace("range(8)", "range(1)")
WRONG = FASTER.replace("alpha * tl.load", "(alpha + 1.0) * tl.load")


def ladder(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "ladder.diagnoser", *args], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=300)


@pytest.mark.slow
def test_a_scripted_agent_drives_the_run_from_the_shell(tmp_path):
    run = tmp_path / "run"
    started = ladder("optimize", str(SCALE / "solution.py"), "--proposer", "agent", "--out", str(run), "--evidence",
                     "timing", "--backend", "tests.runner.host_clock:backend", "--seeds", "1")
    assert started.returncode == 0, started.stderr
    assert started.stdout.startswith("# Round 1") and "## Timing of the best so far" in started.stdout
    brief = json.loads((run / "brief.json").read_text())
    work = Path(brief["files"]["edit"])
    assert brief["round"] == 1 and work.read_text() == (SCALE / "solution.py").read_text()
    assert brief["submit"][:5] == ["ladder", "optimize", "submit", str(run), str(work)]

    work.write_text(WRONG)  # the agent's first try: wrong values
    first = ladder("optimize", "submit", str(run), str(work), "--summary", "scale once")
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("round 1: r1-c1 not accepted: case default:") and "exceeds tolerance" in first.stdout
    assert "# Round 2" in first.stdout and "scale once -> case default" in first.stdout  # the history
    assert work.read_text() == (SCALE / "solution.py").read_text()  # reset to the best for round 2

    work.write_text(FASTER)
    second = ladder("optimize", "submit", str(run), str(work), "--round", "2", "--summary", "launch once")
    assert second.returncode == 0, second.stderr
    assert second.stdout.startswith("round 2: r2-c1 accepted:") and "# Round 3" in second.stdout
    assert (run / "best.py").read_text() == FASTER == work.read_text()

    again = ladder("optimize", "submit", str(run), str(work), "--round", "2", "--json")
    assert again.returncode == 0, again.stderr
    answer = json.loads(again.stdout)
    assert answer["recorded"] is False and answer["candidate"]["same_as_submitted"] is True
    assert [r["round"] for r in Journal(run).rounds()] == [1, 2]

    status = json.loads(ladder("optimize", "status", str(run), "--json").stdout)
    assert (status["state"], status["waiting_for"], status["best"]["round"]) == ("waiting", 3, 2)
    assert status["last_round"]["candidates"][0]["accepted"] is True
    wrong_round = ladder("optimize", "submit", str(run), str(work), "--round", "5")
    assert wrong_round.returncode == 1 and "not the one the run waits for (round 3)" in wrong_round.stderr


# ------------------------------------------------------------------ control flow, with the fake gate


@pytest.fixture
def waiting_run(tmp_path):
    solution, problem = tmp_path / "solution.py", tmp_path / "problem.py"
    solution.write_text(INITIAL)
    problem.write_text("# the problem\n")
    run = tmp_path / "run"
    optimize(solution, problem, run, AgentProposer(run), Settings(rounds=3, evidence="none", gate=GateSettings()),
             gate=fake_gate)
    return run


def candidate(speed: str) -> str:
    return INITIAL.replace("# speed: 1.0", speed)


class Killed(BaseException):
    """A kill -9: nothing after it runs."""


def test_a_resubmission_after_a_kill_is_not_recorded_twice(waiting_run, monkeypatch):
    assert agent.status(waiting_run)["waiting_for"] == 1
    real = agent_proposer.write_brief

    def killed_before_the_next_brief(folder, brief):
        raise Killed()

    monkeypatch.setattr(agent_proposer, "write_brief", killed_before_the_next_brief)
    with pytest.raises(Killed):
        agent.submit(waiting_run, candidate("# speed: 1.5"), "faster", gate=fake_gate)
    monkeypatch.setattr(agent_proposer, "write_brief", real)
    assert agent.status(waiting_run)["state"] == "unfinished"
    assert "# Round 1" in agent.current_brief(waiting_run)  # the kill came before brief 2

    again = agent.submit(waiting_run, candidate("# speed: 1.5"), "faster", gate=fake_gate)
    assert (again.round, again.recorded, again.candidate["same_as_submitted"]) == (1, False, True)
    assert again.brief.startswith("# Round 2") and again.status["waiting_for"] == 2
    other = agent.submit(waiting_run, candidate("# speed: 9.0"), "another", round_number=1, gate=fake_gate)
    assert not other.recorded and other.candidate["same_as_submitted"] is False
    journal = Journal(waiting_run)
    assert [(r["round"], r["accepted"]) for r in journal.rounds()] == [(1, "r1-c1")]
    with pytest.raises(agent.AgentError, match="not the one the run waits for"):
        agent.submit(waiting_run, candidate("# speed: 2.0"), round_number=3, gate=fake_gate)


def test_failed_candidates_are_recorded_rounds_and_the_run_finishes(waiting_run):
    wrong = agent.submit(waiting_run, candidate("# speed: 2.0 # wrong"), gate=fake_gate)
    assert "max error" in wrong.candidate["outcome"]["reason"] and wrong.status["waiting_for"] == 2
    broken = agent.submit(waiting_run, candidate("# speed: 2.0 # reject"), gate=fake_gate)
    assert broken.candidate["outcome"]["reason"].startswith("rejected (runtime)")
    last = agent.submit(waiting_run, candidate("# speed: 1.5"), gate=fake_gate)
    assert last.candidate["outcome"]["accepted"] and last.brief is None
    assert last.status["state"] == "finished" and last.status["reason"] == "3 rounds done"
    with pytest.raises(agent.AgentError, match="the run has finished"):
        agent.submit(waiting_run, candidate("# speed: 3.0"), gate=fake_gate)


def test_the_runs_own_files_are_checked_against_the_journal(waiting_run):
    (waiting_run / "initial.py").write_text(candidate("# speed: 0.1"))  # an agent making the initial slower
    with pytest.raises(JournalError, match="initial.py is not the file the journal recorded"):
        agent.submit(waiting_run, candidate("# speed: 1.5"), gate=fake_gate)
    assert Journal(waiting_run).rounds() == []


def test_the_brief_is_cut_to_the_evidence_level(tmp_path, waiting_run):
    assert json.loads((waiting_run / "brief.json").read_text())["brief"]["timing"] == []
    solution = tmp_path / "solution.py"
    timed = tmp_path / "timed"
    optimize(solution, tmp_path / "problem.py", timed, AgentProposer(timed),
             Settings(evidence="timing", gate=GateSettings()), gate=fake_gate)
    brief = json.loads((timed / "brief.json").read_text())
    assert brief["evidence"] == "timing" and len(brief["brief"]["timing"]) == 3
    assert "## Timing of the best so far" in agent.current_brief(timed)
    assert "## Timing" not in agent.current_brief(waiting_run)


def test_wait_returns_when_the_rounds_others_submit_finish_the_run(waiting_run):
    seen, finished = [], {}
    waiter = threading.Thread(target=lambda: finished.update(
        agent.wait_until_finished(waiting_run, lambda record: seen.append(record["round"]), poll_s=0.05)))
    waiter.start()
    for speed in ("# speed: 1.5", "# speed: 1.2", "# speed: 1.1"):
        agent.submit(waiting_run, candidate(speed), gate=fake_gate)
    waiter.join(timeout=30)
    assert not waiter.is_alive() and finished["state"] == "finished" and seen == [1, 2, 3]
