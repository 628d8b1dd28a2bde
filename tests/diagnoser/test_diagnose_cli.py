"""`ladder diagnose` end to end on this CPU machine: rungs 1, 3 and 4, and why not 2."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ladder.diagnoser.cli.diagnose import diagnose, parse_rungs

SCALED_ADD = Path(__file__).parent / "data" / "kernels" / "scaled_add"


def run(*args: str):
    return CliRunner().invoke(diagnose, list(args))


@pytest.fixture(scope="module")
def cpu_report(fixture_index_dir) -> dict:
    result = run(str(SCALED_ADD / "solution.py"), "--backend", "aot", "--index", fixture_index_dir, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.slow
def test_on_a_cpu_machine_rungs_one_three_four_run_and_two_says_why_not(cpu_report):
    ran = {r["rung"]: r for r in cpu_report["rungs"]}
    assert [n for n in (1, 2, 3, 4) if ran[n]["ran"]] == [1, 3, 4]
    assert ran[2]["why"].startswith("no device on this machine")
    assert cpu_report["reached"] == 4


@pytest.mark.slow
def test_the_cpu_report_carries_ir_facts_and_cites_the_fixture_compiler(cpu_report):
    assert any(f["kind"] == "global_access" and f["value"]["vector_bits"] == 32 for f in cpu_report["facts"])
    assert any(c["path"].endswith("Coalesce.cpp") for c in cpu_report["citations"])
    assert all({"pattern", "rung", "line", "evidence"} <= f.keys() for f in cpu_report["findings"])


@pytest.mark.slow
def test_a_climb_saved_without_rung_four_resumes_with_from(tmp_path, fixture_index_dir):
    first = run(str(SCALED_ADD / "solution.py"), "--backend", "aot", "--rungs", "1-3", "--json")
    assert first.exit_code == 0, first.output
    saved = tmp_path / "partial.json"
    saved.write_text(first.stdout)
    assert not json.loads(first.stdout)["rungs"][3]["ran"]
    resumed = run("--from", str(saved), "--index", fixture_index_dir, "--json")
    assert resumed.exit_code == 0, resumed.output
    report = json.loads(resumed.stdout)
    assert report["rungs"][2]["seconds"] == json.loads(first.stdout)["rungs"][2]["seconds"]  # kept, not rerun
    assert report["rungs"][3]["ran"] and report["citations"]
    assert [h["rungs_run"] for h in report["history"]] == [[1, 3], [4]]


def test_rung_four_without_an_index_says_how_to_build_one(tmp_path):
    result = run(str(SCALED_ADD / "solution.py"), "--backend", "aot", "--rungs", "4", "--index", str(tmp_path / "none"))
    assert result.exit_code == 0, result.output
    assert "ladder index build" in result.stdout


def test_html_report_is_written_next_to_the_markdown(tmp_path):
    out = tmp_path / "report.html"
    result = run(str(SCALED_ADD / "solution.py"), "--backend", "aot", "--rungs", "1", "--html", str(out))
    assert result.exit_code == 0, result.output
    assert out.read_text().startswith("<!doctype html>")
    assert "# ladder diagnose" in result.stdout


@pytest.mark.parametrize("args,message", [
    (["missing.py"], "no such file: missing.py"),
    ([str(SCALED_ADD / "solution.py"), "--problem", "nope.py"], "no such problem file"),
    ([str(SCALED_ADD / "solution.py"), "--rungs", "0-9"], "rungs are numbered 1 to 4"),
    ([], "give a SOLUTION"),
])
def test_user_mistakes_are_one_line_errors(args, message):
    result = run(*args)
    assert result.exit_code != 0
    assert message in result.output
    assert "Traceback" not in result.output


def test_a_solution_without_a_problem_beside_it_is_a_clear_error(tmp_path):
    lone = tmp_path / "solution.py"
    lone.write_text((SCALED_ADD / "solution.py").read_text())
    result = run(str(lone), "--backend", "aot")
    assert "no problem was given" in result.output


def test_a_report_of_another_kind_cannot_be_resumed(tmp_path):
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"schema": "something-else"}))
    assert "not a `ladder diagnose --json` report" in run("--from", str(other)).output


@pytest.mark.parametrize("text,expected", [("1-4", {1, 2, 3, 4}), ("1,3", {1, 3}), ("2-3", {2, 3}), ("4", {4})])
def test_rung_spans(text, expected):
    assert parse_rungs(text) == expected


def test_a_script_that_launches_kernels_is_captured_while_it_runs():
    script = Path(__file__).parent / "data" / "kernels" / "script" / "run_scale.py"
    result = run(str(script), "--backend", "aot", "--rungs", "1-3", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["subject"]["script"] and report["subject"]["problem"] is None
    assert {f["kernel"] for f in report["facts"]} == {"scale_kernel"}
