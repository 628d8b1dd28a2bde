"""Reports render from the diagnosis JSON alone, in Markdown, HTML (with inline SVG plots) and JSON."""
from __future__ import annotations

import json
from html.parser import HTMLParser
from xml.etree import ElementTree

import pytest

from ladder.diagnoser import ladder, report
from ladder.diagnoser.subject import Subject

from ..ladder_recorded import replaying


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> dict:
    """A climb written to disk and read back: the renderers get nothing but this JSON."""
    subject = Subject("solution.py", "problem.py", backend="cuda", device="NVIDIA H200")
    state = ladder.climb(subject, rungs=replaying("softmax_rows"))
    path = tmp_path_factory.mktemp("report") / "diagnose.json"
    path.write_text(report.render(state, "json"))
    return json.loads(path.read_text())


def test_json_has_findings_rungs_and_citations_with_the_documented_fields(saved):
    for finding in saved["findings"]:
        assert {"pattern", "rung", "line", "evidence"} <= finding.keys()
    assert [(r["rung"], r["ran"]) for r in saved["rungs"]] == [(1, True), (2, True), (3, True), (4, True)]
    assert all(r["why"] for r in saved["rungs"])
    assert {"path", "start", "end"} <= saved["citations"][0].keys()


def test_markdown_shows_each_rung_with_why_and_each_finding_with_its_evidence(saved):
    md = report.render(saved, "markdown")
    assert "**Reached rung 4 of 4.**" in md
    assert "| 2 profiling | yes |" in md
    assert "nv.register-spill" in md and "STL.128 [R1+0x40], R8" in md
    assert "`third_party/nvidia/backend/compiler.py:400-431`" in md


def test_markdown_profile_table_has_one_row_per_case(saved):
    md = report.render(saved, "markdown")
    rows = [line for line in md.splitlines() if line.startswith(("| 0 |", "| 1 |"))]
    assert len(rows) == 2
    assert "latency-bound" in rows[1] and "12% / 11%" in rows[1]


class _Collector(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.links, self.svgs, self.external = set(), [], [], []
        self._svg_depth, self._svg = 0, []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("href", "").startswith("#"):
            self.links.append(attrs["href"][1:])
        if tag in {"script", "link", "img"} or (attrs.get("src") or "").startswith("http"):
            self.external.append(tag)


def test_html_is_self_contained_and_every_evidence_link_resolves(saved):
    page = report.render(saved, "html")
    collector = _Collector()
    collector.feed(page)
    assert collector.external == []
    assert collector.links, "findings should link their evidence"
    assert set(collector.links) <= collector.ids


def test_html_plots_are_well_formed_svg_with_one_point_and_bar_pair_per_case(saved):
    page = report.render(saved, "html")
    svgs = [page[start:page.index("</svg>", start) + 6] for start in _all(page, "<svg")]
    assert len(svgs) == 2
    roofline, times = (ElementTree.fromstring(s) for s in svgs)
    assert _ids(roofline, "roofline-case-") == {"roofline-case-0", "roofline-case-1"}
    assert _ids(times, "times-case-") == {f"times-case-{c}-{s}" for c in (0, 1) for s in ("kernel", "reference")}


def _ids(svg: ElementTree.Element, prefix: str) -> set[str]:
    return {e.get("id") for e in svg.iter() if (e.get("id") or "").startswith(prefix)}


def _all(text: str, needle: str) -> list[int]:
    found, at = [], text.find(needle)
    while at != -1:
        found.append(at)
        at = text.find(needle, at + 1)
    return found


def test_a_cpu_report_says_why_it_has_no_profile_and_no_plots(cpu_subject):
    state = json.loads(report.render(ladder.climb(cpu_subject, rungs=replaying("vecadd_scalar")), "json"))
    md = report.render(state, "markdown")
    assert "| 2 profiling | no | no device" in md
    assert "No measurements, so no roofline or time plots: no device on this machine (backend aot)" in md
    page = report.render(state, "html")
    assert "<svg" not in page
    assert 'id="no-profile"' in page and "No measured plots." in page and "no device on this machine" in page


def test_text_from_the_kernel_is_escaped_in_html(saved):
    hostile = json.loads(json.dumps(saved))
    hostile["findings"][0]["title"] = "<script>alert(1)</script>"
    assert "<script>" not in report.render(hostile, "html")


def test_an_unknown_format_is_a_clear_error(saved):
    with pytest.raises(ValueError, match="unknown report format"):
        report.render(saved, "pdf")


def test_a_forward_of_several_kernels_shows_where_its_time_goes_or_why_it_could_not_be_split(saved):
    from ladder.diagnoser.profile.split import split_of

    from ..profile.test_split import CEILINGS, case, site

    with_split = json.loads(json.dumps(saved))
    sites = [site("epilogue_kernel", 40, 1, 0.3, 4_800_000), site("gemm_kernel", 30, 1, 0.6, 2_400_000_000)]
    with_split["profile"]["split"] = split_of(case(3, 1.0e-3, 2, 0.5), sites, CEILINGS, "events")
    md = report.render(with_split, "markdown")
    assert "Where the time goes in case 3 (N=3, forward 1.000 ms)" in md
    assert "| gemm_kernel | 30 | 1 | 600.0 us | 60% | 93% | memory-bound |" in md
    assert "| outside Triton kernels | - | - | 100.0 us | 10% |" in md
    assert "<code>epilogue_kernel</code>" in report.render(with_split, "html")
    with_split["profile"]["split"] = {"case": 3, "error": "the forward could not be split: ValueError: bad"}
    assert "could not be split into them: the forward could not be split: ValueError: bad." in report.render(
        with_split, "markdown")
