"""The suite's summary averages runs with a result only: a run stopped by a call's deadline has, so
far, often nothing but its baseline (1.000x), and counting it would pull the geomean down by a result
that does not exist yet; a run waiting for its agent after a round has one, which stands."""
from __future__ import annotations

import time

from ladder.diagnoser.optimize import agent, loop
from ladder.diagnoser.optimize.gate import GateSettings, decide
from ladder.diagnoser.optimize.journal import Journal
from ladder.diagnoser.optimize.loop import Settings, optimize
from ladder.diagnoser.optimize.proposers.agent import AgentProposer
from ladder.diagnoser.optimize.suite import operator_row, summarize, table, write_pages

from .test_loop import INITIAL, Scripted, fake_gate, fake_result, pair  # noqa: F401 (the fixture)


def test_a_run_stopped_by_the_deadline_is_listed_but_not_averaged(pair, tmp_path, monkeypatch):  # noqa: F811
    solution, problem = pair
    optimize(solution, problem, tmp_path / "done", Scripted([["# speed: 2.0"], []]),
             Settings(rounds=3, evidence="timing", gate=GateSettings()), gate=fake_gate)
    monkeypatch.setattr(loop, "expected_gate_seconds", lambda run, candidates: 1e6)
    optimize(solution, problem, tmp_path / "cut", Scripted([["# speed: 4.0"]]),
             Settings(rounds=3, evidence="timing", gate=GateSettings(), deadline=time.monotonic() + 1000),
             gate=fake_gate)
    rows = [operator_row("level1/done", Journal(tmp_path / "done")), operator_row("level1/cut", Journal(tmp_path / "cut"))]
    assert [row["finished"] for row in rows] == [True, False]
    summary = summarize(rows)
    assert summary["counted"] == 1 and summary["speedup_vs_initial"]["geomean"] == 2.0
    assert summary["unfinished"] == ["level1/cut"] and summary["not_counted"] == ["level1/cut"]
    text = table({"operators": rows, "summary": summary})
    assert "level1/cut *" in text and "1/2 operators" in text
    assert "* unfinished (a later call resumes it), not counted: level1/cut" in text


def test_the_suite_page_links_each_runs_report_and_marks_the_unfinished(pair, tmp_path, monkeypatch):  # noqa: F811
    solution, problem = pair
    runs = tmp_path / "runs"
    optimize(solution, problem, runs / "level1" / "done", Scripted([["# speed: 2.0"], []]),
             Settings(rounds=3, evidence="timing", gate=GateSettings()), gate=fake_gate)
    monkeypatch.setattr(loop, "expected_gate_seconds", lambda run, candidates: 1e6)
    optimize(solution, problem, runs / "level1" / "cut", Scripted([["# speed: 4.0"]]),
             Settings(rounds=3, evidence="timing", gate=GateSettings(), deadline=time.monotonic() + 1000),
             gate=fake_gate)
    rows = [operator_row(f"level1/{name}", Journal(runs / "level1" / name)) for name in ("done", "cut")]
    rows.append({"operator": "level1/never", "error": "not run yet"})
    page = tmp_path / "pages" / "suite.html"
    page.parent.mkdir()
    write_pages({"proposer": "rules", "summary": summarize(rows), "operators": rows}, runs, page)
    text = page.read_text()
    assert '<a href="../runs/level1/done/report.html">level1/done</a>' in text
    assert (runs / "level1" / "done" / "report.html").read_text().startswith("<!doctype html>")
    assert "Unfinished (a later call resumes them), not counted: level1/cut." in text
    assert "<td>level1/never</td><td colspan=\"10\">not run yet</td>" in text and "<b>2.000x</b>" in text


def test_an_agent_run_waiting_after_a_round_counts_as_it_stands_and_one_not_yet_answered_does_not(pair, tmp_path):  # noqa: F811
    solution, problem = pair
    settings = Settings(rounds=15, evidence="timing", gate=GateSettings())
    for name in ("answered", "silent"):
        optimize(solution, problem, tmp_path / name, AgentProposer(tmp_path / name), settings, gate=fake_gate)
    agent.submit(tmp_path / "answered", INITIAL.replace("# speed: 1.0", "# speed: 1.5"), "rewrite", gate=fake_gate)
    assert agent.status(tmp_path / "answered")["state"] == "waiting"
    rows = [operator_row(f"level1/{name}", Journal(tmp_path / name)) for name in ("answered", "silent")]
    assert [(row["finished"], row["waiting"]) for row in rows] == [(False, True), (False, False)]
    summary = summarize(rows)
    assert summary["counted"] == 1 and summary["speedup_vs_initial"]["geomean"] == 1.5
    assert summary["waiting"] == ["level1/answered"] and summary["unfinished"] == ["level1/silent"]
    text = table({"operators": rows, "summary": summary})
    assert "level1/answered +" in text and "level1/silent *" in text
    assert "+ waiting for its proposer's next round (an agent that has not answered), counted as it stands: " \
        "level1/answered" in text


def test_a_run_whose_rounds_ran_on_another_card_names_both_and_the_summary_counts_each(pair, tmp_path):  # noqa: F811
    solution, problem = pair
    settings = Settings(rounds=1, evidence="timing", gate=GateSettings())
    optimize(solution, problem, tmp_path / "one", Scripted([["# speed: 2.0"]]), settings, gate=fake_gate)
    calls = []

    def card_changes_after_the_baseline(problem, best, initial, candidates, settings, torch_compile=False):
        calls.append(1)
        result, initial_name = fake_result(best, initial, candidates)
        card = {} if len(calls) == 1 else {"device": "other GPU", "device_uuid": "GPU-1"}
        return decide({**result, **card}, list(candidates), initial_name)

    optimize(solution, problem, tmp_path / "two", Scripted([["# speed: 3.0"]]), settings,
             gate=card_changes_after_the_baseline)
    rows = [operator_row(f"level1/{name}", Journal(tmp_path / name)) for name in ("one", "two")]
    assert [row["devices"] for row in rows] == [["fake GPU"], ["fake GPU", "other GPU"]]
    summary = summarize(rows)
    assert summary["devices"] == {"fake GPU": 2, "other GPU": 1}
    text = table({"operators": rows, "summary": summary})
    assert "timed on: fake GPU (2), other GPU (1); each ratio on one card" in text
