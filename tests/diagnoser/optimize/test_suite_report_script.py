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
