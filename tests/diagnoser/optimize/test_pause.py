"""A proposer that cannot go on in this call (``Paused``) stops the run resumably, its failures recorded."""
from __future__ import annotations

from ladder.diagnoser.optimize.gate import GateSettings
from ladder.diagnoser.optimize.journal import Journal
from ladder.diagnoser.optimize.loop import Settings, optimize
from ladder.diagnoser.optimize.proposers import Paused, Proposal

from .test_loop import INITIAL, fake_gate, pair  # noqa: F401 (pair is a fixture)


class Flaky:
    """Round after round: what ``plan`` says, ``"wait"`` (pause, nothing to record), ``"down"`` (pause
    with the round's failures) or a speed marker."""

    name = "flaky"

    def __init__(self, plan):
        self.plan = list(plan)

    def propose(self, brief, count):
        step = self.plan.pop(0)
        if step == "wait":
            raise Paused(f"waiting for round {brief.round}")
        if step == "down":
            raise Paused("the endpoint answered nothing", [Proposal(None, "model rewrite", failure="connection refused")])
        return [Proposal(INITIAL.replace("# speed: 1.0", step), f"try {step}")]


def run(pair, tmp_path, plan, resume=False):
    solution, problem = pair
    return optimize(solution, problem, tmp_path / "run", Flaky(plan),
                    Settings(rounds=4, patience=4, evidence="timing", gate=GateSettings()), resume=resume, gate=fake_gate)


def test_a_pause_with_nothing_to_record_leaves_the_round_to_the_resume(pair, tmp_path):
    result = run(pair, tmp_path, ["wait"])
    journal = Journal(tmp_path / "run")
    assert result["stopped"] == "waiting for round 1" and journal.rounds() == []
    assert journal.records()[-1] == {**journal.records()[-1], "kind": "stop", "final": False, "after_round": 0}
    run(pair, tmp_path, ["# speed: 2.0", "wait"], resume=True)
    assert [(r["round"], r["accepted"]) for r in journal.rounds()] == [(1, "r1-c1")]
    assert journal.records()[-1]["reason"] == "waiting for round 2"


def test_a_pause_with_failures_records_the_round_then_stops(pair, tmp_path):
    result = run(pair, tmp_path, ["down"])
    journal = Journal(tmp_path / "run")
    (first,) = journal.rounds()
    assert first["proposals"][0]["outcome"] == {"accepted": False, "reason": "connection refused"}
    assert not first["exhausted"] and result["stopped"] == "the endpoint answered nothing"
    assert not journal.records()[-1]["final"]
    run(pair, tmp_path, ["# speed: 1.5", "# speed: 0.5", "# speed: 0.5"], resume=True)
    assert [r["round"] for r in journal.rounds()] == [1, 2, 3, 4] and journal.records()[-1]["final"]
