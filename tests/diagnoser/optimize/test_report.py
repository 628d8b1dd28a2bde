"""The optimization report renders from a journal alone: JSON document, Markdown, one HTML page."""
from __future__ import annotations

import json
import math
import re

import pytest

from ladder.diagnoser.optimize import report
from ladder.diagnoser.optimize.journal import Journal

from .test_loop import pair, run  # noqa: F401 (the fixture)


def test_the_report_renders_from_the_journal_alone(pair, tmp_path):  # noqa: F811
    run(pair, tmp_path, [["# speed: 1.5", "# speed: 0.99"], ["# speed: 2.0"], []])
    document = report.build(Journal(tmp_path / "run"))
    assert json.loads(json.dumps(document))["best_round"] == 2
    assert document["geomean_vs_initial"] == 2.0 and len(document["changes"]) == 2
    assert [point["best_vs_initial"] for point in document["trajectory"]][:2] == [1.5, 2.0]
    text = report.markdown(document)
    assert "**2.000x** over the initial version" in text and "| c0 |" in text and "not faster than the best" in text
    page = report.html(document)
    assert page.count("<svg") == 3 and "Round 2 (scripted): try # speed: 2.0" in page and "<script" not in page
    ids = re.findall(r'\bid="([^"]+)"', page)
    assert len(ids) == len(set(ids)), "the three plots' SVG ids never collide"


def test_a_run_resumed_on_another_card_names_both_cards(pair, tmp_path):  # noqa: F811
    run(pair, tmp_path, [["# speed: 1.5"], ["# speed: 2.0"], []])
    journal_file = tmp_path / "run" / "journal.jsonl"
    records = [json.loads(line) for line in journal_file.read_text().splitlines()]
    opened_on = records[0]["device"]
    last_round = [record for record in records if record.get("kind") == "round"][-1]
    last_round["device"] = "NVIDIA H100 80GB HBM3"  # played after a resume on another machine
    journal_file.write_text("".join(json.dumps(record) + "\n" for record in records))
    document = report.build(Journal(tmp_path / "run"))
    both = " and ".join(sorted({opened_on, "NVIDIA H100 80GB HBM3"}))
    assert f"proposer on {both};" in report.markdown(document)
    assert f"proposer on {both} (" in report.html(document)


def test_a_run_that_recorded_no_card_still_renders():
    document = dict(_five_cases(), run="r", problem="p", solution="s", proposer="rules", device=None, devices=[],
                    rounds=1, best_round=1, geomean_vs_initial=1.2, geomean_vs_eager=None,
                    geomean_vs_compile=None, changes=[], model_use=None, seconds=1.0)
    assert "proposer on None (" in report.html(document)


def test_a_run_where_nothing_passed_says_so(pair, tmp_path):  # noqa: F811
    run(pair, tmp_path, [["# speed: 0.5"], []])
    document = report.build(Journal(tmp_path / "run"))
    assert document["changes"] == [] and "None: no candidate passed the gate." in report.markdown(document)


SIZES = ["batch_size=4096, dim=32768", "batch_size=1024, dim=393216", "batch_size=16384, dim=4097",
         "batch_size=2048, dim=65535", "batch_size=16384, dim=8192"]


def _five_cases() -> dict:
    """A run's document with five cases whose size labels are long; case 3 has no roofline before."""
    cases = [{"case": i, "label": label, "initial_ms": 0.5 + 0.3 * i, "best_ms": 0.3 + 0.2 * i,
              "eager_ms": 0.4 + 0.25 * i, "torch_compile_ms": 0.35 + 0.2 * i,
              "roofline_before": None if i == 3 else 30.0 + 5 * i, "roofline_after": 55.0 + 6 * i,
              "speedup_vs_initial": 1.6}
             for i, label in enumerate(SIZES)]
    return {"cases": cases, "trajectory": [{"round": 1, "best_vs_initial": 1.2}],
            "candidates": [{"round": 1, "vs_initial": 1.2}]}


@pytest.fixture
def figures(monkeypatch):
    """The plots as matplotlib figures instead of SVG text."""
    monkeypatch.setattr(report, "_svg", lambda figure, name: figure)
    document = _five_cases()
    return {name: plot(document) for name, plot in (("trajectory", report.trajectory_plot),
                                                    ("roofline", report.roofline_plot),
                                                    ("times", report.times_plot))}


@pytest.mark.parametrize("name", ["roofline", "times"])
def test_five_cases_are_ticked_by_number_not_by_their_long_sizes(figures, name):
    axes = figures[name].axes[0]
    assert [t.get_text() for t in axes.get_xticklabels()] == [f"case {i}" for i in range(5)]


def test_the_cases_table_gives_each_case_number_its_sizes():
    page = report.html(dict(_five_cases(), run="r", problem="p", solution="s", proposer="rules", device="d",
                            rounds=1, best_round=1, geomean_vs_initial=1.2, geomean_vs_eager=None,
                            geomean_vs_compile=None, changes=[], model_use=None, seconds=1.0))
    assert all(f'<td class="num">{i}</td><td>{size}</td>' in page for i, size in enumerate(SIZES))


@pytest.mark.parametrize("name", ["trajectory", "roofline", "times"])
def test_every_legend_sits_below_its_plot_clear_of_the_data(figures, name):
    figure = figures[name]
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    axes = figure.axes[0]
    assert axes.get_legend().get_window_extent(renderer).y1 <= axes.get_window_extent(renderer).y0


def test_a_case_without_a_roofline_value_gets_no_bar_rather_than_a_zero(figures):
    heights = [bar.get_height() for bar in figures["roofline"].axes[0].patches]
    assert sum(math.isnan(h) for h in heights) == 1 and 0.0 not in heights


def test_the_time_axis_reads_in_seconds_units(figures):
    axes = figures["times"].axes[0]
    figures["times"].canvas.draw()
    labels = [t.get_text() for t in axes.get_yticklabels() + axes.get_yticklabels(minor=True) if t.get_text()]
    assert labels and all(label.endswith((" us", " ms", " s")) for label in labels), labels
