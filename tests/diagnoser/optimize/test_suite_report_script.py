"""bench/optimize/suite_report.py --over: an agent's runs read over the rules' they continued, each
operator once (the agent's run where there is one, the rules' otherwise), nothing measured again."""
from __future__ import annotations

import json

import pytest

from ladder.diagnoser.optimize import agent
from ladder.diagnoser.optimize.gate import GateSettings
from ladder.diagnoser.optimize.loop import Settings, optimize
from ladder.diagnoser.optimize.proposers.agent import AgentProposer

from ...bench_scripts import load_bench_script
from .test_loop import INITIAL, Scripted, fake_gate, pair  # noqa: F401 (the fixture)

RELU, SOFTMAX = "level1/19_relu", "level1/23_softmax"


@pytest.fixture
def script():
    return load_bench_script("optimize/suite_report.py")


def test_the_agents_runs_over_the_rules_count_each_operator_once(script, pair, tmp_path, capsys):  # noqa: F811
    solution, problem = pair
    rules, agents = tmp_path / "rules", tmp_path / "agent"
    settings = Settings(rounds=15, evidence="timing", gate=GateSettings())
    for key, speed in ((RELU, "1.2"), (SOFTMAX, "1.3")):
        optimize(solution, problem, rules / key, Scripted([[f"# speed: {speed}"], []]), settings, gate=fake_gate)
    optimize(solution, problem, agents / SOFTMAX, AgentProposer(agents / SOFTMAX), settings,
             continue_from=rules / SOFTMAX, gate=fake_gate)
    agent.submit(agents / SOFTMAX, INITIAL.replace("# speed: 1.0", "# speed: 1.6"), "rewrite", gate=fake_gate)

    out = tmp_path / "agent.json"
    assert script.main(["--runs", str(agents), "--proposer", "agent", "--over", str(rules), "--json", str(out),
                        "--html", str(agents / "index.html")]) == 0
    found = json.loads(out.read_text())
    rows = {row["operator"]: row for row in found["operators"] if "error" not in row}
    assert set(rows) == {RELU, SOFTMAX}
    assert rows[RELU]["run"] == str(rules / RELU) and rows[SOFTMAX]["run"] == str(agents / SOFTMAX)
    assert rows[SOFTMAX]["speedup_vs_initial"] == pytest.approx(1.6) and rows[SOFTMAX]["waiting"]
    assert found["summary"]["counted"] == 2 and found["over"] == str(rules)
    assert found["summary"]["speedup_vs_initial"]["geomean"] == pytest.approx((1.2 * 1.6) ** 0.5)
    page = (agents / "index.html").read_text()
    assert '<a href="../rules/level1/19_relu/report.html">level1/19_relu</a>' in page
    assert (rules / RELU / "report.html").is_file() and "level1/23_softmax +" in capsys.readouterr().out


def test_rechecks_fold_every_sample_and_judge_only_those_on_the_accepting_card(script, pair, tmp_path, capsys):  # noqa: F811
    solution, problem = pair
    rules = tmp_path / "rules"
    settings = Settings(rounds=15, evidence="timing", gate=GateSettings())
    for key, speed in ((RELU, "1.2"), (SOFTMAX, "1.3")):
        optimize(solution, problem, rules / key, Scripted([[f"# speed: {speed}"], []]), settings, gate=fake_gate)

    def record(key, device, speedup, correct=True):
        journal = {RELU: 1.2, SOFTMAX: 1.3}[key]
        return {"run": str(rules / key), "journal_speedup": journal, "journal_spread": 0.01, "device": device,
                "correct": correct, "speedup": speedup}

    stale = {**record(RELU, "fake GPU", 2.0), "best_hash": "a best since replaced"}
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    first.write_text(json.dumps({"operators": [record(RELU, "fake GPU", 1.2 * 0.95),
                                               record(SOFTMAX, "another GPU", 1.3 * 0.90)]}))
    second.write_text(json.dumps({"operators": [record(RELU, "fake GPU", 1.2 * 0.99),
                                                record(SOFTMAX, "CPU (Triton interpreter)", None, correct=False),
                                                stale]}))
    out = tmp_path / "rules.json"
    assert script.main(["--runs", str(rules), "--json", str(out), "--recheck", str(first), str(second)]) == 0
    found = json.loads(out.read_text())
    rows = {row["operator"]: row for row in found["operators"] if "error" not in row}
    relu, softmax = rows[RELU]["recheck"], rows[SOFTMAX]["recheck"]
    assert relu["samples"] == relu["timed_samples"] == 2 and relu["ratio"] == pytest.approx((0.95 * 0.99) ** 0.5)
    assert relu["within_spread"] is False  # neither sample is preferred: the two together read 3% low
    assert softmax["samples"] == 2 and not softmax["correct"] and "ratio" not in softmax  # no sample on its card
    summary = found["summary"]["recheck"]
    assert summary["operators"] == 2 and summary["incorrect"] == [SOFTMAX] and summary["judged"] == 1
    assert summary["outside_spread"] == {RELU: pytest.approx((0.95 * 0.99) ** 0.5)}
    assert summary["speedup_vs_initial_geomean"] == pytest.approx((1.2 * (0.95 * 0.99) ** 0.5 * 1.3) ** 0.5)
    printed = capsys.readouterr().out
    assert f"wrong: {SOFTMAX}" in printed and f"outside the spread: {RELU} 0.970" in printed
