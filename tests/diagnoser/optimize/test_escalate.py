"""Escalation (``ladder optimize --from RUN``): another proposer starts where a run stopped, on its
baseline and best, without timing the initial version again, and with limits of its own."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from ladder.diagnoser.optimize import agent
from ladder.diagnoser.optimize.gate import GateSettings
from ladder.diagnoser.optimize.journal import Journal, JournalError
from ladder.diagnoser.optimize.loop import Settings, optimize
from ladder.diagnoser.optimize.proposers import Proposal
from ladder.diagnoser.optimize.proposers.agent import AgentProposer
from ladder.diagnoser.optimize.report import build as build_report
from ladder.diagnoser.optimize.report import markdown

from .test_loop import INITIAL, Scripted, fake_gate


class Listed:
    """A second proposer: one batch of markers per call, then nothing new."""

    name = "listed"

    def __init__(self, batches: list[list[str]]):
        self.batches, self.briefs, self.histories = batches, [], []

    def propose(self, brief, count):
        self.briefs.append(brief)
        self.histories.append([h["round"] for h in brief.history])
        batch = self.batches[len(self.briefs) - 1] if len(self.briefs) <= len(self.batches) else []
        return [Proposal(source=INITIAL.replace("# speed: 1.0", m), summary=f"listed {m}") for m in batch]


@dataclass(frozen=True)
class Operator:
    key: str
    solution: Path
    problem: Path


def counting(gate):
    calls = []

    def counted(*args, **kwargs):
        calls.append(kwargs.get("torch_compile", False))
        return gate(*args, **kwargs)
    return counted, calls


@pytest.fixture
def finished_rules_run(tmp_path):
    """A run whose proposer won once (1.5x) and then had nothing new: finished."""
    solution, problem = tmp_path / "solution.py", tmp_path / "problem.py"
    solution.write_text(INITIAL)
    problem.write_text("# the problem\n")
    run = tmp_path / "rules"
    summary = optimize(solution, problem, run, Scripted([["# speed: 1.5"], []]),
                       Settings(rounds=15, evidence="timing", gate=GateSettings()), gate=fake_gate)
    assert summary["stopped"] == "the scripted proposer has nothing new to try"
    return solution, problem, run


def settings(**changes) -> Settings:
    return Settings(**{"rounds": 15, "patience": 3, "evidence": "timing", "gate": GateSettings(), **changes})


def test_a_continued_run_starts_on_the_other_runs_best_without_timing_the_baseline_again(finished_rules_run, tmp_path):
    solution, problem, source = finished_rules_run
    before = (source / "journal.jsonl").read_bytes()
    gate, calls = counting(fake_gate)
    proposer = Listed([["# speed: 1.505"], ["# speed: 2.0"]])
    summary = optimize(solution, problem, tmp_path / "llm", proposer, settings(), continue_from=source, gate=gate)

    assert True not in calls  # no baseline gate (the only one that times torch.compile)
    journal = Journal(tmp_path / "llm")
    header = journal.header()
    assert header["proposer"] == "listed" and header["continued_from"]["proposer"] == "scripted"
    assert (header["continued_from"]["after_round"], header["continued_from"]["stopped"]) == \
        (2, "the scripted proposer has nothing new to try")
    rounds = journal.rounds()
    assert [(r["round"], r["proposer"], r["accepted"]) for r in rounds] == [
        (1, "scripted", "r1-c1"), (2, "scripted", None), (3, "listed", None), (4, "listed", "r4-c1"), (5, "listed", None)]
    # 1.505x is within the spread of the copied best (1.5x); 2.0x is not, and counts from the initial version
    assert summary["geomean_vs_initial"] == pytest.approx(2.0) and summary["best_round"] == 4
    assert summary["stopped"] == "the listed proposer has nothing new to try"
    assert [b.round for b in proposer.briefs] == [3, 4, 5]
    assert proposer.histories == [[1, 2], [1, 2, 3], [1, 2, 3, 4]]  # the copied rounds are history
    assert (source / "journal.jsonl").read_bytes() == before  # the source run is only read
    assert "speed: 2.0" in (tmp_path / "llm" / "best.py").read_text()
    page = markdown(build_report(journal))
    assert "rounds 1-2 are the scripted proposer's" in page
    assert "- round 1 (scripted): try # speed: 1.5" in page and "- round 4 (listed): listed # speed: 2.0" in page


def test_a_continued_runs_round_limit_and_patience_count_its_own_rounds(finished_rules_run, tmp_path):
    solution, problem, source = finished_rules_run
    summary = optimize(solution, problem, tmp_path / "a", Listed([["# speed: 1.0"]] * 9), settings(rounds=2),
                       continue_from=source, gate=fake_gate)
    assert summary["stopped"] == "2 rounds done" and summary["rounds"] == 4
    summary = optimize(solution, problem, tmp_path / "b", Listed([["# speed: 1.0"]] * 9), settings(patience=2),
                       continue_from=source, gate=fake_gate)
    assert summary["stopped"] == "2 rounds without a gain" and summary["rounds"] == 4


def test_an_agent_takes_over_at_the_next_round(finished_rules_run, tmp_path):
    solution, problem, source = finished_rules_run
    run = tmp_path / "agent"
    optimize(solution, problem, run, AgentProposer(run), settings(rounds=2), continue_from=source, gate=fake_gate)
    assert agent.status(run)["waiting_for"] == 3
    assert agent.current_brief(run).startswith("# Round 3")
    taken = agent.submit(run, INITIAL.replace("# speed: 1.0", "# speed: 3.0"), "rewrite", gate=fake_gate)
    assert (taken.round, taken.candidate["outcome"]["accepted"]) == (3, True)
    assert Journal(run).best()["geomean_vs_initial"] == pytest.approx(3.0)


def test_continuing_a_run_of_another_initial_version_or_a_changed_problem_is_refused(finished_rules_run, tmp_path):
    solution, problem, source = finished_rules_run
    other = tmp_path / "other.py"
    other.write_text(INITIAL + "# another kernel\n")
    with pytest.raises(JournalError, match="another initial version"):
        optimize(other, problem, tmp_path / "x", Listed([]), settings(), continue_from=source, gate=fake_gate)
    problem.write_text("# the problem, other cases\n")
    with pytest.raises(JournalError, match="is not that problem as it was then"):
        optimize(solution, problem, tmp_path / "y", Listed([]), settings(), continue_from=source, gate=fake_gate)
    assert not (tmp_path / "x" / "journal.jsonl").exists() and not (tmp_path / "y" / "journal.jsonl").exists()


def test_a_copy_cut_short_leaves_no_run_and_the_next_one_copies_again(finished_rules_run, tmp_path, monkeypatch):
    solution, problem, source = finished_rules_run
    from ladder.diagnoser.optimize import escalate

    real = escalate.write_atomically

    def killed_at_the_journal(path, data):
        if Path(path).name == "journal.jsonl":
            raise KeyboardInterrupt
        real(path, data)

    monkeypatch.setattr(escalate, "write_atomically", killed_at_the_journal)
    with pytest.raises(KeyboardInterrupt):
        optimize(solution, problem, tmp_path / "c", Listed([]), settings(), continue_from=source, gate=fake_gate)
    assert not Journal(tmp_path / "c").exists()
    monkeypatch.setattr(escalate, "write_atomically", real)
    summary = optimize(solution, problem, tmp_path / "c", Listed([]), settings(), continue_from=source, gate=fake_gate)
    assert summary["rounds"] == 3 and summary["geomean_vs_initial"] == pytest.approx(1.5)


def test_a_suite_continues_each_operator_that_has_a_run_in_the_other_suite(tmp_path, monkeypatch):
    from ladder.diagnoser.optimize import suite
    from ladder.diagnoser.optimize.suite import optimize_suite

    ops = []
    for key in ("op_a", "op_b"):
        folder = tmp_path / "kernels" / key
        folder.mkdir(parents=True)
        (folder / "solution.py").write_text(INITIAL)
        (folder / "problem.py").write_text(f"# {key}\n")
        ops.append(Operator(key, folder / "solution.py", folder / "problem.py"))
    monkeypatch.setattr(suite, "load_proposer", lambda name, run=None, **_: Scripted([["# speed: 1.5"], []]))
    optimize_suite(ops[:1], settings(), "rules", tmp_path / "rules", gate=fake_gate)  # op_b never ran there
    monkeypatch.setattr(suite, "load_proposer", lambda name, run=None, **_: Listed([["# speed: 2.0"]]))
    document = optimize_suite(ops, settings(), "listed", tmp_path / "llm", gate=fake_gate,
                              continue_from=tmp_path / "rules")
    rows = {row["operator"]: row for row in document["operators"]}
    assert [(r["round"], r["proposer"]) for r in Journal(tmp_path / "llm" / "op_a").rounds()] == \
        [(1, "scripted"), (2, "scripted"), (3, "listed"), (4, "listed")]
    assert Journal(tmp_path / "llm" / "op_b").header().get("continued_from") is None  # a baseline of its own
    assert rows["op_a"]["speedup_vs_initial"] == pytest.approx(2.0) == rows["op_b"]["speedup_vs_initial"]
