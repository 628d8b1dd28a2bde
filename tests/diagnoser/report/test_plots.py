"""The plots stay legible with five cases: no label overlaps another label or a point, whether the
cases spread out (labels beside the points) or crowd one spot (a legend below the plot)."""
from __future__ import annotations

import re
from collections import Counter

import pytest

from ladder.diagnoser import report
from ladder.diagnoser.report import document, plots

from .reports import (
    near_roof_cases,
    profile,
    softmax_cases,
    softmax_report,
    spread_cases,
)

PEAK, BANDWIDTH = 5.1e13, 4.26e12
H200_FP16 = 7.49e14


def _boxes(figure):
    """Display-space boxes of the roofline's point labels, its roof label, its legend texts and
    its points."""
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    axes = figure.axes[0]
    texts = [t for t in axes.texts if t.get_visible()]
    legend = axes.get_legend()
    legend_texts = legend.get_texts() if legend else []
    points = []
    for collection in axes.collections:
        for x, y in collection.get_offsets():
            cx, cy = axes.transData.transform((x, y))
            points.append((cx, cy))
    return ([t.get_window_extent(renderer) for t in texts], [t.get_window_extent(renderer) for t in legend_texts],
            points, legend.get_window_extent(renderer) if legend else None, axes.get_window_extent(renderer))


def _overlapping(boxes) -> list[tuple[int, int]]:
    return [(i, j) for i, a in enumerate(boxes) for j, b in enumerate(boxes) if i < j and a.overlaps(b)]


def _covers(box, point, margin: float = 3.0) -> bool:
    x, y = point
    return box.x0 - margin <= x <= box.x1 + margin and box.y0 - margin <= y <= box.y1 + margin


def test_five_spread_cases_are_labelled_beside_their_points_without_overlap():
    figure = plots.roofline_figure(spread_cases(), BANDWIDTH, PEAK)
    labels, _legend_texts, points, legend, frame = _boxes(figure)
    assert legend is None and len(points) == 5
    assert len(labels) == 1 + 5, "the roof's label and one per case"
    assert _overlapping(labels) == []
    for box in labels:
        assert frame.contains(box.x0, box.y0) and frame.contains(box.x1, box.y1)
        assert not any(_covers(box, p, margin=0.0) for p in points)


def test_no_label_is_drawn_across_the_roof_line():
    figure = plots.roofline_figure(near_roof_cases(), BANDWIDTH, H200_FP16)
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    axes = figure.axes[0]
    (roof,) = axes.lines
    path = roof.get_transform().transform_path(roof.get_path())
    labels = [t for t in axes.texts if t.get_text().startswith("case ")]
    assert len(labels) == 5 and axes.get_legend() is None
    assert [t.get_text() for t in labels if path.intersects_bbox(t.get_window_extent(renderer), filled=False)] == []


def test_five_crowded_cases_get_a_legend_below_the_plot_instead_of_labels():
    figure = plots.roofline_figure(softmax_cases(), BANDWIDTH, PEAK)
    labels, legend_texts, points, legend, frame = _boxes(figure)
    assert len(labels) == 1, "only the roof is labelled on the plot"
    assert [t.get_text() for t in figure.axes[0].get_legend().get_texts()] == [
        "case 0: batch_size=4096, dim=32768, 48% of its floor", "case 1: batch_size=1024, dim=393216, 49% of its floor",
        "case 2: batch_size=16384, dim=4097, 63% of its floor", "case 3: batch_size=2048, dim=65535, 26% of its floor",
        "case 4: batch_size=16384, dim=8192, 49% of its floor"]
    assert _overlapping(legend_texts) == []
    assert legend.y1 <= frame.y0, "the legend sits below the axes, away from the points"
    assert not any(_covers(labels[0], p) for p in points)


def test_the_time_plot_has_a_bar_pair_and_a_readable_speedup_per_case():
    figure = plots.times_figure(softmax_cases())
    axes = figure.axes[0]
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    bars = [p for p in axes.patches if (p.get_gid() or "").startswith("times-case-")]
    assert len(bars) == 10
    speedups = [t for t in axes.texts if t.get_text().endswith("x")]
    assert [t.get_text() for t in speedups] == ["0.90x"] * 5
    assert _overlapping([t.get_window_extent(renderer) for t in speedups]) == []
    assert [t.get_text() for t in axes.get_xticklabels()] == [f"case {i}" for i in range(5)]


def test_plots_on_one_page_never_share_an_svg_id():
    page = report.render(softmax_report(), "html")
    svg_ids = [i for svg in re.findall(r"<svg.*?</svg>", page, re.DOTALL) for i in re.findall(r'\bid="([^"]+)"', svg)]
    assert svg_ids and [i for i, n in Counter(svg_ids).items() if n > 1] == []


def test_a_profile_whose_cases_cannot_be_placed_says_why_the_roofline_is_missing():
    cases = [dict(c, flops=None) for c in softmax_cases()]
    drawn = plots.for_profile(profile(cases))
    assert len(drawn["plots"]) == 1
    assert drawn["missing"] == "no roofline: no case has flops, bytes and a time, or the ceilings are unknown"


def test_without_matplotlib_the_page_still_renders_and_says_why_it_has_no_plots(monkeypatch):
    monkeypatch.setattr(plots, "available", lambda: "matplotlib is not installed here (pip install matplotlib)")
    built = document.build(softmax_report())
    assert built["profile"]["plots"] == []
    page = report.render(softmax_report(), "html")
    assert "<svg" not in page and "matplotlib is not installed here" in page


@pytest.mark.parametrize("cases", [softmax_cases, spread_cases])
def test_every_case_is_a_point_with_its_own_id(cases):
    svg = plots.to_svg(plots.roofline_figure(cases(), BANDWIDTH, PEAK), "roofline")
    assert sorted(re.findall(r'id="(roofline-case-\d+)"', svg)) == [f"roofline-case-{i}" for i in range(5)]


@pytest.mark.parametrize(("value", "tick"), [(1e-4, "100 us"), (1e-3, "1 ms"), (0.01, "10 ms"), (2.0, "2 s"),
                                             (5e-8, "50 ns")])
def test_time_ticks_read_in_the_unit_of_their_decade(value, tick):
    assert plots.tick_seconds(value) == tick
