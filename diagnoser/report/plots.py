"""The reports' plots, drawn with matplotlib and inlined as SVG (the HTML stays one file).

`roofline_figure()` puts each case on the device's roofline (arithmetic intensity against achieved
FLOP/s, log-log, under the measured bandwidth slope and compute roof); `times_figure()` draws each
case's time beside the reference's. Labels must stay legible however the cases crowd: each case's
label is tried at a few offsets around its point and kept at the first where it overlaps no other
label, point, roof annotation or the roof line itself and stays inside the axes (points that sit
just under the compute roof are the common case for a good GEMM); when points overlap one another or some
label fits nowhere, the labels give way to a legend below the plot (markers are hollow and of
distinct shapes, so points drawn on top of each other stay visible). Figures are built on `matplotlib.figure.Figure`, without
pyplot's global state, so rendering is safe anywhere and needs no display.
"""
from __future__ import annotations

import io
import re
from typing import Any

from ladder.diagnoser.report import text

SIZE = (5.6, 3.7)
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "h")
COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22")
MARKER_AREA = 42.0
# Where a case's label may go, in points from its marker: beside it first, then above and below.
OFFSETS = ((7, 5, "left", "bottom"), (7, -5, "left", "top"), (-7, 5, "right", "bottom"), (-7, -5, "right", "top"),
           (0, 9, "center", "bottom"), (0, -9, "center", "top"), (10, 0, "left", "center"), (-10, 0, "right", "center"))
RC = {"svg.fonttype": "none", "font.family": "sans-serif", "font.size": 9}


def available() -> str:
    """Empty when plots can be drawn here, else why not (one line)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return "matplotlib is not installed here (pip install matplotlib), so this report has no plots"
    return ""


def for_profile(profile: dict) -> dict:
    """{"plots": [svg, ...], "missing": why a plot is absent ("" when none is)}."""
    missing = available()
    if missing:
        return {"plots": [], "missing": missing}
    cases = profile.get("cases") or []
    ceilings = profile.get("ceilings") or {}
    case_peaks = [c["ceiling_flops"] for c in cases if c.get("ceiling_flops")]
    peak = max(case_peaks) if case_peaks else max((ceilings.get("flops") or {}).values(), default=None)
    drawn, missing = [], []
    roof = roofline_figure(cases, ceilings.get("bandwidth"), peak)
    if roof is None:
        missing.append("no roofline: no case has flops, bytes and a time, or the ceilings are unknown")
    else:
        drawn.append(to_svg(roof, "roofline"))
    bars = times_figure(cases)
    if bars is None:
        missing.append("no time plot: no case has a measured time")
    else:
        drawn.append(to_svg(bars, "times"))
    return {"plots": drawn, "missing": "; ".join(missing)}


def new_figure(size: tuple[float, float] = SIZE) -> tuple[Any, Any]:
    """A figure and its axes, on the Agg canvas (text extents are measurable before saving)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    with _style():
        figure = Figure(figsize=size, dpi=100)
        FigureCanvasAgg(figure)
        axes = figure.add_subplot()
    return figure, axes


def to_svg(figure: Any, name: str) -> str:
    """The figure as an inline `<svg>` element whose ids (and the references to them) all start
    with `name-`: matplotlib numbers the ids of every figure alike, and one page holds several."""
    import matplotlib

    buffer = io.StringIO()
    with _style(), matplotlib.rc_context({"svg.hashsalt": f"ladder-{name}"}):
        figure.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg"):]
    return re.sub(r'(\bid="|url\(#|href="#)(?!' + re.escape(name) + r'-)', lambda m: f"{m.group(1)}{name}-", svg)


def _style():
    import matplotlib

    return matplotlib.rc_context(RC)


def roofline_figure(cases: list[dict], bandwidth: float | None, peak_flops: float | None):
    """Each case at (flops/bytes, flops/time) under min(peak, intensity x bandwidth); None when
    no case can be placed."""
    points = [(c, c["flops"] / c["bytes"], c["flops"] / c["time_s"]) for c in cases
              if c.get("flops") and c.get("bytes") and c.get("time_s")]
    if not points or not bandwidth or not peak_flops:
        return None
    figure, axes = new_figure()
    figure.subplots_adjust(left=0.12, right=0.97, top=0.91, bottom=0.13)
    ridge = peak_flops / bandwidth
    x_lo = min([p[1] for p in points] + [ridge]) / 10
    x_hi = max([p[1] for p in points] + [ridge]) * 10
    y_lo = min([p[2] for p in points] + [x_lo * bandwidth]) / 3
    axes.set(xscale="log", yscale="log", xlim=(x_lo, x_hi), ylim=(y_lo, peak_flops * 4),
             xlabel="arithmetic intensity (flop/byte)", ylabel="achieved FLOP/s",
             title="Roofline: each case against the measured ceilings")
    axes.grid(True, which="major", color="#e6e6e6", linewidth=0.6)
    (roof_line,) = axes.plot([x_lo, ridge, x_hi], [x_lo * bandwidth, peak_flops, peak_flops], color="#333333",
                             linewidth=1.6)
    roof = axes.annotate(f"{peak_flops / 1e12:.0f} TFLOP/s, {bandwidth / 1e12:.2f} TB/s", (ridge, peak_flops),
                         xytext=(6, 5), textcoords="offset points", fontsize=8, color="#333333")
    for i, (case, intensity, achieved) in enumerate(points):
        efficiency = f", {text.percent(case['efficiency'])} of its floor" if case.get("efficiency") is not None else ""
        axes.scatter([intensity], [achieved], s=MARKER_AREA, marker=MARKERS[i % len(MARKERS)], facecolors="none",
                     edgecolors=COLORS[i % len(COLORS)], linewidths=1.5, zorder=3, gid=f"roofline-case-{case['case']}",
                     label=f"case {case['case']}: {text.params(case.get('params')) or 'default'}{efficiency}")
    place_labels(figure, axes, [(f"case {p[0]['case']}", p[1], p[2], COLORS[i % len(COLORS)])
                                for i, p in enumerate(points)], obstacles=[roof], lines=[roof_line])
    return figure


def seconds_axis(unit: float = 1.0):
    """A tick formatter for an axis whose values are in `unit` seconds (1e-3: milliseconds)."""
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda value, _: tick_seconds(value * unit))


def tick_seconds(value: float) -> str:
    """A log axis tick in the unit of its decade: 100 us, 1 ms, 10 ms (not 100.0 us beside 1 ms)."""
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "us")):
        if value >= scale:
            return f"{value / scale:g} {unit}"
    return f"{value * 1e9:g} ns"


def place_labels(figure: Any, axes: Any, labels: list[tuple[str, float, float, str]], obstacles: list,
                 lines: tuple = ()) -> bool:
    """Annotate each (text, x, y, color) at the first offset that collides with nothing: no other
    label or point, no box of `obstacles`, no stroke of `lines` (a line's box is the whole plot, so
    its path is tested). When points overlap or a label fits nowhere, show a legend below the axes
    instead. True if annotated."""
    renderer = figure.canvas.get_renderer()
    frame = axes.get_window_extent(renderer)
    points = [_marker_box(axes, x, y, figure.dpi) for _, x, y, _ in labels]
    if any(a.overlaps(b) for i, a in enumerate(points) for b in points[i + 1:]):
        _legend(axes, len(labels))
        return False
    taken = [artist.get_window_extent(renderer) for artist in obstacles] + points
    placed = []
    for label, x, y, color in labels:
        for dx, dy, ha, va in OFFSETS:
            note = axes.annotate(label, (x, y), xytext=(dx, dy), textcoords="offset points", ha=ha, va=va,
                                 fontsize=8, color=color)
            box = note.get_window_extent(renderer)
            own = _marker_box(axes, x, y, figure.dpi)
            clear = [b for b in taken if not (b.x0 == own.x0 and b.y0 == own.y0)]
            if _inside(box, frame) and not any(box.overlaps(b) for b in clear) and not _crosses(box, lines):
                placed.append(note)
                taken.append(box)
                break
            note.remove()
        else:
            for note in placed:
                note.remove()
            _legend(axes, len(labels))
            return False
    return True


def _legend(axes: Any, entries: int) -> None:
    axes.legend(loc="upper center", bbox_to_anchor=(0.5, -0.15), fontsize=8, frameon=False,
                ncol=1 if entries <= 6 else 2)


def _marker_box(axes: Any, x: float, y: float, dpi: float):
    from matplotlib.transforms import Bbox

    cx, cy = axes.transData.transform((x, y))
    half = (MARKER_AREA ** 0.5) / 2 * dpi / 72 + 1
    return Bbox.from_extents(cx - half, cy - half, cx + half, cy + half)


def _crosses(box: Any, lines) -> bool:
    """Whether any of the drawn lines passes through the box (display coordinates)."""
    return any(line.get_transform().transform_path(line.get_path()).intersects_bbox(box.padded(2), filled=False)
               for line in lines)


def _inside(box: Any, frame: Any) -> bool:
    return box.x0 >= frame.x0 and box.x1 <= frame.x1 and box.y0 >= frame.y0 and box.y1 <= frame.y1


def times_figure(cases: list[dict]):
    """Per case, the kernel's median time beside the reference's (log scale), with the speedup
    over the reference written above each pair; None when no case was timed."""
    rows = [c for c in cases if c.get("time_s")]
    if not rows:
        return None
    figure, axes = new_figure()
    width = 0.38
    positions = list(range(len(rows)))
    for offset, key, color, label in ((-width / 2, "time_s", COLORS[0], "kernel"), (width / 2, "ref_time_s", "#aaaaaa", "reference")):
        for position, case in zip(positions, rows):
            if case.get(key):
                axes.bar(position + offset, case[key], width, color=color, gid=f"times-case-{case['case']}-{label}",
                         label=label if position == next(p for p, c in zip(positions, rows) if c.get(key)) else None)
    for position, case in zip(positions, rows):
        if case.get("ref_time_s"):
            top = max(case["time_s"], case["ref_time_s"])
            axes.annotate(f"{case['ref_time_s'] / case['time_s']:.2f}x", (position, top), xytext=(0, 3),
                          textcoords="offset points", ha="center", va="bottom", fontsize=7, color="#333333")
    values = [c["time_s"] for c in rows] + [c["ref_time_s"] for c in rows if c.get("ref_time_s")]

    axes.set(yscale="log", ylim=(min(values) / 3, max(values) * 4), ylabel="median time (log scale)",
             title="Time per case: kernel and reference (speedup above)")
    axes.yaxis.set_major_formatter(seconds_axis())
    axes.set_xticks(positions, [f"case {c['case']}" for c in rows], fontsize=8)
    axes.legend(loc="upper center", bbox_to_anchor=(0.5, -0.08), fontsize=8, frameon=False, ncol=2)
    return figure
