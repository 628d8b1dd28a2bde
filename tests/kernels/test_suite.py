"""`ladder suite`: operator selection, the small-case problems, rows and summary, the command."""
from __future__ import annotations

import json
import math
import sys

import pytest
from click.testing import CliRunner

from ladder.diagnoser.cli.suite import suite
from ladder.diagnoser.suite.operators import Operator, SuiteError, discover, quick_problems
from ladder.diagnoser.suite.render import render
from ladder.diagnoser.suite.rows import operator_row, summarize
from ladder.diagnoser.suite.run import write_json
from ladder.runner.problem import load_problem

pytestmark = pytest.mark.filterwarnings("ignore:Conversion of an array with ndim:DeprecationWarning")


# ------------------------------------------------------------------------------------ selection


def test_operators_come_in_level_then_number_order():
    keys = [(op.level, op.number) for op in discover()]
    assert keys == sorted(keys)


def test_level_filter_keeps_one_level():
    assert {op.level for op in discover(level=2)} == {2}


@pytest.mark.parametrize("selector", ["level1/23_softmax", "23_softmax", "softmax", "kernels/level1/23_softmax/"])
def test_only_accepts_key_folder_or_name(selector):
    assert [op.key for op in discover(only=(selector,))] == ["level1/23_softmax"]


def test_only_by_number_selects_that_number_in_every_level():
    assert [op.key for op in discover(only=("9",))] == ["level1/09_tall_skinny_matmul",
                                                        "level2/09_matmul_subtract_multiply_relu"]


def test_unknown_operator_is_a_one_line_error_naming_it():
    with pytest.raises(SuiteError, match="'no_such_op'"):
        discover(only=("softmax", "no_such_op"))


def test_empty_kernel_folder_is_an_error(tmp_path):
    with pytest.raises(SuiteError, match="no operators"):
        discover(root=tmp_path)


# --------------------------------------------------------------------------- small-case problems


def test_quick_problem_has_the_test_cases_as_its_cases():
    op = discover(only=("level1/19_relu",))[0]
    with quick_problems([op]) as small:
        problem = load_problem(small[op.key])
        assert problem.cases == load_problem(op.problem).module.get_test_cases()


def test_quick_problem_cases_reach_get_inputs():
    op = discover(only=("level1/19_relu",))[0]
    with quick_problems([op]) as small:
        problem = load_problem(small[op.key])
        for case in problem.cases:
            with problem.applied(case):
                (x,) = problem.get_inputs()
            assert tuple(x.shape) == (case["batch_size"], case["dim"])


# ------------------------------------------------------------------------------ rows and summary


def record(ok=True, cases=((1.0, 2.0, 50.0), (4.0, 2.0, 25.0))):
    """A runner flat record with (initial ms, eager ms, % roofline) per case."""
    return {
        "ok": ok, "rejected": None, "base_seed": 7,
        "cases": [{"case": i, "label": f"n={i}", "params": {"n": i}, "correct": ok,
                   "time_ms": {"median": initial, "p10": initial, "p90": initial},
                   "reference_ms": eager, "speedup": eager / initial, "roofline_pct": roof,
                   **({} if ok else {"reason": "mismatch"})}
                  for i, (initial, eager, roof) in enumerate(cases)],
    }


OP = Operator(1, 19, "relu", discover(only=("relu",))[0].folder)


def test_operator_row_takes_geometric_means_over_cases():
    row = operator_row(OP, record())
    assert row["initial_ms"] == pytest.approx(2.0)
    assert row["eager_ms"] == pytest.approx(2.0)
    assert row["speedup_vs_eager"] == pytest.approx(math.sqrt(2.0 * 0.5))
    assert row["roofline_pct"] == pytest.approx(math.sqrt(50.0 * 25.0))


def test_eager_roofline_follows_from_the_time_ratio():
    row = operator_row(OP, record(cases=((2.0, 1.0, 30.0),)))
    assert row["cases"][0]["eager_roofline_pct"] == pytest.approx(60.0)


def test_summary_counts_only_operators_correct_on_every_case():
    rows = [operator_row(OP, record()), operator_row(OP, record(cases=((1.0, 4.0, 80.0),))),
            operator_row(OP, record(ok=False))]
    summary = summarize(rows)
    assert summary["counted"] == 2 and summary["correct"] == 2
    assert summary["speedup_vs_eager_geomean"] == pytest.approx(math.sqrt(1.0 * 4.0))
    assert summary["speedup_vs_eager_median"] == pytest.approx((1.0 + 4.0) / 2)
    assert summary["not_counted"] == [OP.key]


def test_render_lists_each_operator_and_why_one_failed():
    rows = [operator_row(OP, record()), operator_row(OP, record(ok=False))]
    text = render(rows, summarize(rows), {"backend": "cuda", "device": "H200", "timed": True})
    assert text.count(OP.key) >= 3
    assert "case n=0: mismatch" in text
    assert "1/2 operators correct" in text


def test_json_is_written_whole(tmp_path):
    path = tmp_path / "out" / "suite.json"
    write_json(path, {"summary": {"x": 1.5}})
    assert json.loads(path.read_text()) == {"summary": {"x": 1.5}}
    assert not list(path.parent.glob("*.tmp"))


# ---------------------------------------------------------------------------------- the command


@pytest.fixture
def interpreter(monkeypatch):
    """An in-process interpreter run sets TRITON_INTERPRET for what it imports; undo it after."""
    monkeypatch.setenv("TRITON_INTERPRET", "1")


def test_command_checks_an_operator_on_the_interpreter_and_prints_json(interpreter, tmp_path):
    output = tmp_path / "suite.json"
    result = CliRunner().invoke(suite, ["--backend", "interpret", "--quick", "--only", "relu",
                                        "--seeds", "1", "--json", "--output", str(output)])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert [row["operator"] for row in document["operators"]] == ["level1/19_relu"]
    assert document["operators"][0]["ok"] and document["meta"]["backend"] == "interpret"
    assert json.loads(output.read_text())["summary"]["correct"] == 1


def test_command_table_says_the_interpreter_does_not_time(interpreter):
    result = CliRunner().invoke(suite, ["--backend", "interpret", "--quick", "--only", "relu", "--seeds", "1"])
    assert result.exit_code == 0, result.output
    assert "level1/19_relu" in result.stdout and "not timed" in result.stdout


def test_command_rejects_an_unknown_operator_with_status_2():
    result = CliRunner().invoke(suite, ["--only", "no_such_op"])
    assert result.exit_code == 2
    assert "no_such_op" in result.output


def test_per_case_table_shows_every_case_under_its_operator():
    rows = [operator_row(OP, record())]
    text = render(rows, summarize(rows), {"backend": "cuda", "timed": True}, per_case=True)
    assert "  n=0" in text and "  n=1" in text
    assert "2.00x" in text and "0.50x" in text


def test_interpreter_run_needs_a_fresh_process_once_triton_loaded_without_it(monkeypatch):
    import types

    from ladder.runner.bench import interpreter_needs_fresh_process

    class InterpretedFunction:
        pass

    monkeypatch.setitem(sys.modules, "triton.language.standard", types.SimpleNamespace(zeros=object()))
    assert interpreter_needs_fresh_process("interpret")
    monkeypatch.setitem(sys.modules, "triton.language.standard",
                        types.SimpleNamespace(zeros=InterpretedFunction()))
    assert not interpreter_needs_fresh_process("interpret")


def test_show_prints_the_table_of_a_saved_document(tmp_path):
    rows = [operator_row(OP, record())]
    path = tmp_path / "suite.json"
    write_json(path, {"meta": {"backend": "cuda", "device": "H200", "timed": True},
                      "summary": summarize(rows), "operators": rows})
    result = CliRunner().invoke(suite, ["--show", str(path), "--per-case"])
    assert result.exit_code == 0, result.output
    assert "on cuda (H200)" in result.stdout and "  n=1" in result.stdout


def test_show_rejects_a_file_that_is_not_a_suite_document(tmp_path):
    path = tmp_path / "other.json"
    path.write_text('{"cases": []}')
    result = CliRunner().invoke(suite, ["--show", str(path)])
    assert result.exit_code == 2 and "not a suite JSON document" in result.output
