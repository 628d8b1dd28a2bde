"""Findings become one card per pattern: its explanation from the catalog, the cases it holds for,
and per line the evidence chain source -> IR -> metric -> compiler, in Markdown and HTML."""
from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from ladder.diagnoser import report
from ladder.diagnoser.report import document
from ladder.diagnoser.report.cards import cards
from ladder.diagnoser.report.explain import explanation

from .reports import FILE, NARROW, fact, softmax_report, without_device


@pytest.fixture(scope="module")
def softmax() -> dict:
    return softmax_report()


@pytest.fixture(scope="module")
def markdown(softmax) -> str:
    return report.render(softmax, "markdown")


@pytest.fixture(scope="module")
def page(softmax) -> str:
    return report.render(softmax, "html")


def _card(built: dict, pattern: str) -> dict:
    return next(c for c in built["cards"] if c["label"] == pattern)


def test_findings_of_one_pattern_make_one_card_listing_each_line(softmax):
    grouped = cards(softmax)
    assert [c.pattern for c in grouped] == ["nv.redundant-global-traffic", "nv.scalar-access"]
    scalar = grouped[1]
    assert [s.line for s in scalar.sites] == [18, 24, 30, 31]
    assert scalar.findings == [1, 2, 3, 4, 5], "the rung-4 finding on those lines joins the card"
    assert scalar.rungs == [1, 4]


def test_the_markdown_has_one_heading_per_pattern_not_one_per_line(markdown):
    headings = [line for line in markdown.splitlines() if line.startswith("### ")]
    assert headings == ["### 1. nv.redundant-global-traffic: The same data read from global memory more than once",
                        "### 2. nv.scalar-access: Global loads and stores are not vectorized"]
    assert "lines 18, 24, 30, 31" in markdown
    for line in (18, 24, 30, 31):
        assert f"- **solution.py:{line}**" in markdown


def test_each_card_shows_why_the_pattern_is_slow_and_its_fix(markdown, page):
    entry = explanation("nv.scalar-access")
    assert entry.why.startswith("A memory-bound kernel reaches a fraction of HBM bandwidth")
    for rendered in (markdown, page.replace("&#39;", "'").replace("&#34;", '"')):
        assert entry.why in rendered
        assert "Make 16-byte alignment and contiguity provable or true" in rendered
    assert "How to apply it, with a before and after" in page


def test_each_card_names_the_cases_it_holds_for_with_what_was_measured(softmax, markdown):
    holds = _card(document.build(softmax, with_plots=False), "nv.scalar-access")["holds_for"]
    assert [(c["name"], c["anchor"]) for c in holds["cases"]] == [("case 2", "case-2"), ("case 3", "case-3")]
    assert holds["note"] == "2 of 5 cases"
    assert ("**Holds for:** case 2 (batch_size=16384, dim=4097: memory-bound, 63% of its floor, 200.6 us); "
            "case 3 (batch_size=2048, dim=65535: latency-bound, 26% of its floor, 985.0 us) (2 of 5 cases).") in markdown


def test_each_line_has_its_chain_from_source_to_ir_to_metric_to_compiler(softmax):
    card = _card(document.build(softmax, with_plots=False), "nv.scalar-access")
    first = card["sites"][0]
    assert first["source"][0]["code"].startswith("x = tl.load(x_row + start + cols")
    assert [(f["variant"], f["cases"]) for f in first["ir"]] == [("[n_cols:i32,stride_x:i32,stride_y:i32]", "cases 2, 3")]
    assert "ld.global.b32" in first["ir"][0]["excerpt_full"] and first["ir"][0]["anchor"].startswith("fact-")
    assert [m["anchor"] for m in first["metrics"]] == ["case-2", "case-3"]
    assert [k["anchor"] for k in first["compiler"]] == ["C1", "C2"], "the chunk it carries, then the pattern's answer"
    store = card["sites"][3]
    assert store["where"] == "solution.py:31" and "st.global.b32" in store["ir"][0]["excerpt_full"]
    assert [k["anchor"] for k in store["compiler"]] == ["C1"]


def test_a_line_that_holds_for_every_case_names_the_worst_instead_of_listing_all(softmax):
    site = _card(document.build(softmax, with_plots=False), "nv.redundant-global-traffic")["sites"][0]
    assert site["metrics"] == [{"text": "all 5 cases; worst: case 3 at 26% of its floor (latency-bound)",
                                "anchor": "case-3"}]


def test_a_repeated_detail_points_back_instead_of_repeating(softmax):
    sites = _card(document.build(softmax, with_plots=False), "nv.scalar-access")["sites"]
    assert sites[1]["source"][0]["detail"] == "as on solution.py:18"
    assert sites[3]["source"][0]["detail"].startswith("store of x_ptr"), "a different detail is kept"


def test_the_markdown_chain_reads_in_order_for_every_line(markdown):
    block = markdown.split("- **solution.py:24**")[-1].split("- **solution.py:30**")[0]
    order = [re.match(r"- (source|IR|metric|compiler)", line.strip()).group(1) for line in block.strip().splitlines()]
    assert order == ["source", "IR", "metric", "compiler"]


class _Chain(HTMLParser):
    """The chain table of each card: rows of (line, source, IR, metric, compiler) cell texts and links."""

    def __init__(self):
        super().__init__()
        self.rows, self._cell, self._in_chain = [], None, False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table" and "chain" in (attrs.get("class") or ""):
            self._in_chain = True
        elif self._in_chain and tag == "tr":
            self.rows.append([])
        elif self._in_chain and tag == "td":
            self._cell = {"text": "", "links": []}
            self.rows[-1].append(self._cell)
        elif self._cell is not None and tag == "a":
            self._cell["links"].append(attrs["href"])

    def handle_endtag(self, tag):
        if tag == "table":
            self._in_chain = False
        if tag == "td":
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell["text"] += data


def test_the_html_chain_links_every_step_to_where_it_is_shown(page):
    parser = _Chain()
    parser.feed(page)
    rows = [r for r in parser.rows if r]
    assert len(rows) == 1 + 4, "one row for the redundant read, four for the four accesses"
    line, source, ir, metric, compiler = rows[1]
    assert line["text"].strip() == "solution.py:18"
    assert "tl.load" in source["text"]
    assert "ld.global.b32" in ir["text"] and ir["links"][0].startswith("#fact-")
    assert metric["links"] == ["#case-2", "#case-3"]
    assert compiler["links"] == ["#C1", "#C2"]


def test_a_pattern_less_finding_elsewhere_keeps_a_card_of_its_own(softmax):
    elsewhere = dict(softmax, findings=softmax["findings"] + [{
        "pattern": None, "rung": 4, "title": "compiler source behind: a barrier in a loop", "file": FILE, "line": 40,
        "kernel": "softmax_kernel", "confidence": 0.5, "fix": None,
        "evidence": [{"type": "fact", "kernel": "softmax_kernel", "kind": "barrier_in_loop", "file": FILE, "line": 40,
                      "stage": "ptx", "value": {"count": 2}, "excerpt": "bar.sync 0;"}]}])
    built = document.build(elsewhere, with_plots=False)
    assert [c["label"] for c in built["cards"]] == ["nv.redundant-global-traffic", "nv.scalar-access", "compiler source"]
    loose = built["cards"][2]
    assert not loose["catalogued"] and loose["why"] is None
    assert loose["title"] == "A barrier in a loop", "the label says 'compiler source' already"
    assert loose["sites"][0]["ir"][0]["excerpt"] == ["bar.sync 0;"]


def test_a_compiler_finding_on_a_cards_lines_joins_it_and_brings_the_line_it_adds(softmax):
    store_40 = dict(fact(NARROW, 40, 32, "store"), line=40)
    behind = {"pattern": None, "rung": 4, "title": "compiler source behind: the load at solution.py:18 moves 32 bits"
              " per instruction (likewise at line 40)", "file": FILE, "line": 18, "kernel": NARROW,
              "confidence": 0.5, "fix": None,
              "evidence": [{"type": "fact", **fact(NARROW, 18, 32)}, {"type": "fact", **store_40},
                           {"type": "chunk", "path": "lib/Dialect/TritonGPU/Transforms/Coalesce.cpp", "start": 49,
                            "end": 86, "pass": "tritongpu-coalesce", "score": 0.06}]}
    joined = dict(softmax, findings=softmax["findings"][:-1] + [behind])
    built = document.build(joined, with_plots=False)
    assert [c["label"] for c in built["cards"]] == ["nv.redundant-global-traffic", "nv.scalar-access"]
    card = _card(built, "nv.scalar-access")
    assert card["lines"] == ["18", "24", "30", "31", "40"]
    added = card["sites"][-1]
    assert added["source"] == [] and added["ir"][0]["kind"] == "global_access"
    assert [k["label"] for k in added["compiler"]] == ["lib/Dialect/TritonGPU/Transforms/Coalesce.cpp:49-86"]


def test_a_pattern_the_catalog_does_not_know_renders_without_an_explanation(softmax):
    unknown = dict(softmax, findings=[dict(softmax["findings"][0], pattern="nv.not-a-pattern")])
    card = document.build(unknown, with_plots=False)["cards"][0]
    assert card["label"] == "nv.not-a-pattern" and card["why"] is None and card["fixes"]
    assert "nv.not-a-pattern" in report.render(unknown, "markdown")


def test_without_a_device_each_chain_says_its_metric_was_not_measured(softmax):
    card = _card(document.build(without_device(softmax), with_plots=False), "nv.scalar-access")
    assert card["holds_for"]["note"] == "" and [c["anchor"] for c in card["holds_for"]["cases"]] == [None, None]
    assert card["sites"][0]["metrics"] == [{"text": "not measured (the profile section says why)", "anchor": "no-profile"}]
    page = report.render(without_device(softmax), "html")
    assert 'href="#no-profile"' in page and 'id="no-profile"' in page


def test_what_the_guards_saw_in_the_forward_is_in_the_profile_notes_with_its_cases():
    noted = softmax_report()
    for case in noted["profile"]["cases"][:2]:
        case["guard_notes"] = ["forward calls torch compute ops: torch.relu"]
    text = report.render(noted, "markdown")
    assert "cases 0, 1: not a kernel-only forward, timed as it is: forward calls torch compute ops: torch.relu" in text
    assert "not a kernel-only forward" in report.render(noted, "html")
    assert "not a kernel-only forward" not in report.render(softmax_report(), "markdown")


def test_a_floor_that_is_not_the_arguments_span_says_so_in_the_profile_notes():
    noted = softmax_report()
    first, second = noted["profile"]["cases"][:2]
    first.update(efficiency=None, floor_note="ran in 3.0x less than the floor its arguments give: floor unknown")
    second.update(spanned_bytes=2 ** 30, bytes_source="the DRAM traffic Nsight Compute measured (300.0 MiB)")
    text = report.render(noted, "markdown")
    assert "case 0: ran in 3.0x less than the floor its arguments give" in text
    assert "case 1: floor from the DRAM traffic Nsight Compute measured (300.0 MiB)" in text
    assert "floor from" not in report.render(softmax_report(), "markdown")

