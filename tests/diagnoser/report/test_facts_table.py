"""Rung 3's facts are a table that fits the page: grouped per kernel specialization, fixed column
widths, long values cut to a readable length with the full value one click (or hover) away."""
from __future__ import annotations

import re

import pytest

from ladder.diagnoser import report
from ladder.diagnoser.report import document

from .reports import softmax_report


@pytest.fixture(scope="module")
def softmax() -> dict:
    return softmax_report()


def test_facts_are_grouped_by_the_specialization_they_were_compiled_for(softmax):
    groups = document.build(softmax, with_plots=False)["facts"]
    assert [(g["kernel"], g["variant"], len(g["rows"]), g["cases"]) for g in groups] == [
        ("softmax_kernel", "[n_cols:i32%16,stride_x:i32%16,stride_y:i32%16]", 3 + 4, "cases 0, 1, 4"),
        ("softmax_kernel", "[n_cols:i32,stride_x:i32,stride_y:i32]", 2 + 4 + 1, "cases 2, 3")]


def test_a_very_long_value_is_cut_in_the_cell_and_kept_whole_behind_it(softmax):
    rows = [r for g in document.build(softmax, with_plots=False)["facts"] for r in g["rows"]]
    long = next(r for r in rows if r["kind"] == "occupancy")
    assert len(long["value_full"]) > 400 and len(long["value"]) <= 140 and long["value"].endswith("\u2026")
    page = report.render(softmax, "html")
    row = re.search(rf'<tr id="{long["anchor"]}">.*?</tr>', page, re.DOTALL).group(0)
    assert '<details class="clip">' in row
    assert row.count("with a very long description") == 24, "the full value: in the tooltip and behind the click"


def test_the_tables_have_a_fixed_layout_that_wraps_long_words(softmax):
    page = report.render(softmax, "html")
    assert re.search(r"table\.grid \{[^}]*table-layout: fixed", page)
    assert re.search(r"table\.grid td, table\.grid th \{[^}]*overflow-wrap: anywhere", page)
    assert re.search(r'<table class="grid facts"><colgroup>(<col style="width:\d+%">){5}</colgroup>', page)


def test_a_markdown_fact_row_stays_one_short_table_row(softmax):
    markdown = report.render(softmax, "markdown")
    row = next(line for line in markdown.splitlines() if line.startswith("| occupancy |"))
    assert row.count(" | ") == 3 and len(row) < 200 and "\u2026" in row


def test_the_cases_table_is_sized_by_its_content_and_breaks_only_between_words(softmax):
    page = report.render(softmax, "html")
    assert re.search(r'<table class="grid cases">\s*<tr>', page), "no fixed column widths"
    assert re.search(r"table\.grid\.cases \{[^}]*table-layout: auto", page)
    assert re.search(r"table\.grid\.cases td, table\.grid\.cases th \{[^}]*overflow-wrap: break-word", page)
    assert re.search(r"table\.grid\.cases td\.num \{[^}]*white-space: nowrap", page), "2.929 ms stays on one line"
