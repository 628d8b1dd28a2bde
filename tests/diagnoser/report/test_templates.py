"""The report templates: package data found through the package, not a path into the source tree
(tests/test_packaging.py checks that the wheel carries them), and the cells they render."""
from __future__ import annotations

from pathlib import Path

from ladder.diagnoser.report import templating

ROOT = Path(__file__).resolve().parents[3]
TEMPLATES = ROOT / "diagnoser" / "report" / "templates"


def test_the_templates_load_through_the_package():
    assert {"diagnose.html.j2", "diagnose.md.j2", "report.css"} <= set(templating.environment().list_templates())


def test_a_path_in_a_narrow_cell_wraps_between_folders_and_before_its_lines():
    path = templating.breakable_path("lib/Dialect/<Pipeliner>/AssignLatencies.cpp:213-253")
    assert str(path) == "lib/<wbr>Dialect/<wbr>&lt;Pipeliner&gt;/<wbr>AssignLatencies.cpp<wbr>:213-253"
