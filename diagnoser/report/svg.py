"""The report's two plots as inline SVG strings: no plotting library, so the HTML stays one file.

`roofline()` puts each case on the device's roofline (arithmetic intensity against achieved
FLOP/s, log-log, with the measured bandwidth slope and compute roof); `times()` draws the time per
case next to the reference's.
"""
from __future__ import annotations

import math
from html import escape

WIDTH, HEIGHT = 560, 340
LEFT, RIGHT, TOP, BOTTOM = 70, 20, 20, 50
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")


def _log_scale(low: float, high: float, size: float, flip: bool):
    lo, hi = math.log10(low), math.log10(high)

    def place(value: float) -> float:
        frac = (math.log10(value) - lo) / (hi - lo)
        return (1 - frac) * size if flip else frac * size
    return place


def _decades(low: float, high: float) -> list[float]:
    return [10.0 ** e for e in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)]


def _frame(title: str, body: list[str], x_label: str, y_label: str) -> str:
    return "\n".join([
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}"'
        f' role="img" aria-label="{escape(title)}" font-family="sans-serif" font-size="11">',
        f"<title>{escape(title)}</title>",
        *body,
        f'<text x="{LEFT + (WIDTH - LEFT - RIGHT) / 2}" y="{HEIGHT - 8}" text-anchor="middle">{escape(x_label)}</text>',
        f'<text transform="translate(14 {TOP + (HEIGHT - TOP - BOTTOM) / 2}) rotate(-90)" text-anchor="middle">{escape(y_label)}</text>',
        "</svg>",
    ])


def _si(value: float) -> str:
    for factor, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= factor:
            return f"{value / factor:g}{suffix}"
    return f"{value:g}"


def roofline(cases: list[dict], bandwidth: float, peak_flops: float) -> str:
    """Each case at (flops/bytes, flops/time) under min(peak, intensity x bandwidth)."""
    points = [(c["case"], c["flops"] / c["bytes"], c["flops"] / c["time_s"]) for c in cases
              if c.get("flops") and c.get("bytes") and c.get("time_s")]
    if not points or not bandwidth or not peak_flops:
        return ""
    ridge = peak_flops / bandwidth
    x_lo = min([p[1] for p in points] + [ridge]) / 10
    x_hi = max([p[1] for p in points] + [ridge]) * 10
    y_hi = peak_flops * 3
    y_lo = min([p[2] for p in points] + [x_lo * bandwidth]) / 3
    w, h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    x, y = _log_scale(x_lo, x_hi, w, False), _log_scale(y_lo, y_hi, h, True)
    body = [f'<rect x="{LEFT}" y="{TOP}" width="{w}" height="{h}" fill="none" stroke="#999"/>']
    for tick in _decades(x_lo, x_hi):
        if x_lo <= tick <= x_hi:
            body.append(f'<line x1="{LEFT + x(tick):.1f}" y1="{TOP}" x2="{LEFT + x(tick):.1f}" y2="{TOP + h}" stroke="#eee"/>')
            body.append(f'<text x="{LEFT + x(tick):.1f}" y="{TOP + h + 14}" text-anchor="middle">{_si(tick)}</text>')
    for tick in _decades(y_lo, y_hi):
        if y_lo <= tick <= y_hi:
            body.append(f'<line x1="{LEFT}" y1="{TOP + y(tick):.1f}" x2="{LEFT + w}" y2="{TOP + y(tick):.1f}" stroke="#eee"/>')
            body.append(f'<text x="{LEFT - 4}" y="{TOP + y(tick) + 4:.1f}" text-anchor="end">{_si(tick)}</text>')
    roof = [(x_lo, x_lo * bandwidth), (ridge, peak_flops), (x_hi, peak_flops)]
    path = " ".join(f"{LEFT + x(a):.1f},{TOP + y(b):.1f}" for a, b in roof)
    body.append(f'<polyline points="{path}" fill="none" stroke="#333" stroke-width="2"/>')
    body.append(f'<text x="{LEFT + x(ridge) + 6:.1f}" y="{TOP + y(peak_flops) - 6:.1f}">'
                f"{peak_flops / 1e12:.0f} TFLOP/s, {bandwidth / 1e12:.2f} TB/s</text>")
    for i, (case, ai, achieved) in enumerate(points):
        cx, cy = LEFT + x(ai), TOP + y(achieved)
        color = PALETTE[i % len(PALETTE)]
        body.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="5" fill="{color}"><title>case {case}: '
                    f"{ai:.2f} flop/byte, {achieved / 1e12:.3f} TFLOP/s</title></circle>")
        body.append(f'<text x="{cx + 7:.1f}" y="{cy + 4:.1f}" fill="{color}">case {case}</text>')
    return _frame("Roofline: each case against the device's measured ceilings", body,
                  "arithmetic intensity (flop/byte)", "achieved FLOP/s")


def times(cases: list[dict]) -> str:
    """Grouped bars per case: this kernel's median time and the reference's (log scale)."""
    rows = [c for c in cases if c.get("time_s")]
    if not rows:
        return ""
    values = [c["time_s"] for c in rows] + [c["ref_time_s"] for c in rows if c.get("ref_time_s")]
    lo, hi = min(values) / 3, max(values) * 3
    w, h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    y = _log_scale(lo, hi, h, True)
    slot = w / len(rows)
    bar = min(28.0, slot / 3)
    body = [f'<rect x="{LEFT}" y="{TOP}" width="{w}" height="{h}" fill="none" stroke="#999"/>']
    for tick in _decades(lo, hi):
        if lo <= tick <= hi:
            body.append(f'<line x1="{LEFT}" y1="{TOP + y(tick):.1f}" x2="{LEFT + w}" y2="{TOP + y(tick):.1f}" stroke="#eee"/>')
            body.append(f'<text x="{LEFT - 4}" y="{TOP + y(tick) + 4:.1f}" text-anchor="end">{_seconds(tick)}</text>')
    for i, case in enumerate(rows):
        left = LEFT + i * slot + slot / 2 - bar
        for j, (key, color, label) in enumerate((("time_s", PALETTE[0], "kernel"), ("ref_time_s", "#aaa", "reference"))):
            if not case.get(key):
                continue
            top = TOP + y(case[key])
            body.append(f'<rect x="{left + j * bar:.1f}" y="{top:.1f}" width="{bar - 2:.1f}" height="{TOP + h - top:.1f}"'
                        f' fill="{color}"><title>case {case["case"]} {label}: {_seconds(case[key])}</title></rect>')
        body.append(f'<text x="{LEFT + i * slot + slot / 2:.1f}" y="{TOP + h + 14}" text-anchor="middle">case {case["case"]}</text>')
    body.append(f'<rect x="{LEFT + 8}" y="{TOP + 6}" width="10" height="10" fill="{PALETTE[0]}"/>'
                f'<text x="{LEFT + 22}" y="{TOP + 15}">kernel</text>'
                f'<rect x="{LEFT + 70}" y="{TOP + 6}" width="10" height="10" fill="#aaa"/>'
                f'<text x="{LEFT + 84}" y="{TOP + 15}">reference</text>')
    return _frame("Time per case: kernel against the PyTorch reference", body, "case", "median time (log)")


def _seconds(value: float) -> str:
    if value >= 1e-3:
        return f"{value * 1e3:g} ms"
    return f"{value * 1e6:g} us"
