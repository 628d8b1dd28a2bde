"""The optimization report renders from a journal alone: JSON document, Markdown, one HTML page."""
from __future__ import annotations

import json
import re

from diagnoser.optimize import report
from diagnoser.optimize.journal import Journal

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
    assert page.count("<svg") == 3 and "Round 2: try # speed: 2.0" in page and "<script" not in page
    ids = re.findall(r'\bid="([^"]+)"', page)
    assert len(ids) == len(set(ids)), "the three plots' SVG ids never collide"


def test_a_run_where_nothing_passed_says_so(pair, tmp_path):  # noqa: F811
    run(pair, tmp_path, [["# speed: 0.5"], []])
    document = report.build(Journal(tmp_path / "run"))
    assert document["changes"] == [] and "None: no candidate passed the gate." in report.markdown(document)
